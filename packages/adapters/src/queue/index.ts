export * from './queue-error';
export * from './topology';
export * from './amqp-connection';
export * from './confirm-tracker';
export * from './amqp-batch-publisher';
export * from './amqp-batch-consumer';
export * from './dead-letter';
export * from './memory-batch-queue';
