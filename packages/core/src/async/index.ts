export * from './lanes';
export * from './cut-ranges';
