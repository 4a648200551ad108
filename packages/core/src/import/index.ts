export * from './delimited';
export * from './jsonl';
export * from './timestamp';
export * from './columns';
