export * from './filter-spec';
export * from './compile-filter';
export * from './language-codes';
