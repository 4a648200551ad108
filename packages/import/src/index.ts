export * from './import-source';
export * from './import-row';
export * from './run-import';
