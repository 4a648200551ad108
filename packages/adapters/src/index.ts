export * from './service';
export * from './range-reader';
export * from './store';
export * from './queue';
export * from './parquet';
