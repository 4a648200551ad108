export * from './filter-spec';
export * from './compile-filter';
