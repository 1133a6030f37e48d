// grpc.health.v1.Health on grpc-js: Check answers the status now, Watch streams it and each change.
import type { handleServerStreamingCall, handleUnaryCall, ServerWritableStream } from '@grpc/grpc-js';
import { GrpcStatus, methodDefinition } from './grpc-method.js';
import {
  decodeHealthCheckRequest,
  decodeHealthCheckResponse,
  encodeHealthCheckRequest,
  encodeHealthCheckResponse,
  type HealthCheckRequest,
  ServingStatus,
} from './health-codec.js';

const HEALTH = 'grpc.health.v1.Health';
const codec = {
  decodeRequest: decodeHealthCheckRequest,
  encodeRequest: encodeHealthCheckRequest,
  decodeResponse: decodeHealthCheckResponse,
};

export const healthServiceDefinition = {
  Check: methodDefinition(`/${HEALTH}/Check`, codec, false),
  Watch: methodDefinition(`/${HEALTH}/Watch`, codec, true),
};

interface Watcher {
  readonly call: ServerWritableStream<HealthCheckRequest | Error, Buffer>;
  readonly service: string;
  sent: ServingStatus;
}

/**
 * The health service of a server whose services are `services` ('' naming the server as a whole), all serving
 * while `serving()` says so. Watchers learn of a change within `pollMs`: `serving()` is asked once per interval
 * for all of them, and only while there is one, so that an idle server runs no timer.
 */
export class HealthService {
  private readonly watchers = new Set<Watcher>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly services: readonly string[],
    private readonly serving: () => boolean,
    private readonly pollMs: number,
  ) {}

  readonly check: handleUnaryCall<HealthCheckRequest | Error, Buffer> = (call, callback) => {
    const request = call.request;
    if (request instanceof Error) {
      callback({ code: GrpcStatus.INVALID_ARGUMENT, details: request.message });
      return;
    }
    const { service } = request;
    const status = this.status(service, this.isServing());
    if (status === ServingStatus.SERVICE_UNKNOWN)
      callback({ code: GrpcStatus.NOT_FOUND, details: `unknown service ${JSON.stringify(service)}` });
    else callback(null, encodeHealthCheckResponse(status));
  };

  readonly watch: handleServerStreamingCall<HealthCheckRequest | Error, Buffer> = (call) => {
    const request = call.request;
    if (request instanceof Error) {
      call.emit('error', { code: GrpcStatus.INVALID_ARGUMENT, details: request.message });
      return;
    }
    const { service } = request;
    const watcher: Watcher = { call, service, sent: this.status(service, !this.closed && this.isServing()) };
    call.write(encodeHealthCheckResponse(watcher.sent));
    if (this.closed) {
      call.end();
      return;
    }
    this.watchers.add(watcher);
    call.on('cancelled', () => this.forget(watcher));
    this.timer ??= setInterval(() => this.poll(), this.pollMs).unref();
  };

  /** Tells every watcher NOT_SERVING and ends its stream, so that a graceful shutdown need not wait for them. */
  close(): void {
    this.closed = true;
    for (const watcher of this.watchers) {
      this.send(watcher, this.status(watcher.service, false));
      watcher.call.end();
      this.forget(watcher);
    }
  }

  private poll(): void {
    const serving = this.isServing();
    for (const watcher of this.watchers) this.send(watcher, this.status(watcher.service, serving));
  }

  private send(watcher: Watcher, status: ServingStatus): void {
    if (status === watcher.sent) return;
    watcher.sent = status;
    watcher.call.write(encodeHealthCheckResponse(status));
  }

  private forget(watcher: Watcher): void {
    this.watchers.delete(watcher);
    if (this.watchers.size > 0 || this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private status(service: string, serving: boolean): ServingStatus {
    if (!this.services.includes(service)) return ServingStatus.SERVICE_UNKNOWN;
    return serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  }

  /** A `serving()` that throws is taken as not serving: a probe must get an answer. */
  private isServing(): boolean {
    try {
      return this.serving() === true;
    } catch {
      return false;
    }
  }
}
