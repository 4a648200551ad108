export * from './logger';
export * from './metrics-server';
export * from './shutdown';
export * from './run-service';
