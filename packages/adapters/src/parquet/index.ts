export {
  cdxTimestampToMillis, checkRow, DEFAULT_PARQUET_ENGINE, DEFAULT_ROW_GROUP_SIZE, DEFAULT_ZSTD_LEVEL, DUCKDB_VECTOR_SIZE, PART_COLUMNS, QUALITY_COLUMNS,
  ParquetPartError, type ParquetEngine, type PartQuality, type PartRow, type WriteParquetPartOptions,
} from './part-row';
export { PART_SQL_TYPES, closeDuckDbParquetEngine } from './write-duckdb';
export { writeParquetPart } from './write-parquet-part';
