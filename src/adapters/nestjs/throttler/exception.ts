// The rejection of a throttled HTTP or GraphQL request: a 429 HttpException, for Nest's exception filters.
import { HttpException, HttpStatus } from '@nestjs/common';

export const throttlerMessage = 'ThrottlerException: Too Many Requests';

/** 429, its body `{ statusCode: 429, message }`; the message defaults to `throttlerMessage`. */
export class ThrottlerException extends HttpException {
  constructor(message?: string) {
    super(`${message || throttlerMessage}`, HttpStatus.TOO_MANY_REQUESTS);
  }
}
