// Why a server could not listen: one line for the user, from the error of the system call.

/** What stopped the listen, in the user's terms; the message itself for an error without a known code. */
export function listenFailure(error: unknown, port: number, host: string): string {
  const { message } = error as NodeJS.ErrnoException;
  // grpc-js gives no code: the failures of its listens are inside its message (`listen EADDRINUSE: ...`).
  const code = (error as NodeJS.ErrnoException).code ?? /\blisten (E[A-Z]+)\b/.exec(message)?.[1];
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} is in use`;
    case 'EACCES':
      return `port ${port} needs privileges this user does not have (choose one above 1023)`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host ${host} cannot be resolved`;
    default:
      return `cannot listen on ${host} port ${port}: ${message}`;
  }
}
