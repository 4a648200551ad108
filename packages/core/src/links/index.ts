export * from './link-targets';
