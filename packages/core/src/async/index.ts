export * from './lanes';
export * from './cut-ranges';
export * from './channel';
