// The command's help texts: what `tollgate --help` and `tollgate help <command>` print.

export const COMMANDS = ['simulate', 'serve', 'help'] as const;
export type CommandName = (typeof COMMANDS)[number];

export const MAIN_USAGE = `Usage: tollgate <command> [options]

Commands:
  simulate          Serve the rate limiter simulator on this machine and print its URL
  serve             Serve rate limit decisions to Envoy (gRPC), nginx and Traefik (HTTP)
  help [command]    Show this help, or a command's

Options:
  -h, --help        Show this help
  -v, --version     Print tollgate's version

Exit codes: 0 done, 1 failed (a port in use, say), 2 wrong usage.
`;

export const SIMULATE_USAGE = `Usage: tollgate simulate [--port <port>] [--host <host>] [--json]

Serves the rate limiter simulator (its page, POST /api/simulate, and the rate-limited routes its live mode
calls, on an in-memory store) until Ctrl-C or SIGTERM, and prints its URL.

Options:
  --port <port>     Port to listen on, 0 for any free one (default: the PORT variable, else 3000)
  --host <host>     Address to listen on (default: 127.0.0.1, this machine only)
  --json            Print {"url","port"} as one JSON line, and errors as one JSON line on stderr
  -h, --help        Show this help
`;

export const SERVE_USAGE = `Usage: tollgate serve --config <path> [--config <path>...] [--grpc-port <port>]
                      [--http-port <port>] [--host <host>] [--merge-domains] [--json]

Serves rate limit decisions configured with envoyproxy/ratelimit's YAML: Envoy's rate limit service (gRPC,
v3) on the gRPC port; on the HTTP port, the check nginx (auth_request) and Traefik (ForwardAuth) call, POST
/json, GET /healthcheck and GET /metrics. Changed files are reloaded within a second, counts kept; a bad file
is logged with its line and the last good configuration stays. Ctrl-C or SIGTERM lets calls in flight finish
(up to 10 s), then exits 0.

Options:
  --config <path>     A YAML file, or a folder whose files are all loaded; repeat for more (required)
  --grpc-port <port>  gRPC port, 0 for any free one (default: 8081)
  --http-port <port>  HTTP port, 0 for any free one (default: 8080)
  --host <host>       Address both listen on (default: 127.0.0.1, this machine only). The service asks
                      no credentials: whoever reaches it can spend any client's quota. So it is reachable
                      from elsewhere only when asked: --host 0.0.0.0 for a proxy on another machine or
                      outside its container (the image passes it; publish its ports to the proxy alone)
  --merge-domains     Files of one domain add up to it, as the reference's MERGE_DOMAIN_CONFIG (default:
                      a domain in two files is refused)
  --json              Print {"grpcPort","httpPort"} as one JSON line; logs and errors as JSON lines
  -h, --help          Show this help

Store, from the environment: memory (this process alone) unless a Redis address is set.
  REDIS_URL              redis://[[user]:password@]host[:port][/db]
  REDIS_HOST, REDIS_PORT Redis without REDIS_URL (default 127.0.0.1 and 6379; either one asks for Redis)
  REDIS_PASSWORD         Used when REDIS_URL carries none
  REDIS_CLUSTER_NODES    host:port,host:port,...: a Redis Cluster to discover, instead of the above
  FAIL_OPEN              1 (default) allows, 0 denies, while Redis is unreachable, for limits that set
                         no failure mode of their own
  REQUIRE_REDIS          1 refuses to start when Redis cannot be reached; 0 (default) starts anyway
`;

export const USAGE: Readonly<Record<CommandName, string>> = {
  simulate: SIMULATE_USAGE,
  serve: SERVE_USAGE,
  help: MAIN_USAGE,
};
