export * from './logger';
export * from './pretty-log';
export * from './metrics-server';
export * from './shutdown';
export * from './run-service';
export * from './broker-events';
