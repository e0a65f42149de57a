"""The service's entry points."""

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def health() -> dict[str, str]:
    """Return the health report the /healthz route serves."""
    return {"status": "ok"}


class Handler(BaseHTTPRequestHandler):
    """Serves GET /healthz."""

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        if self.path != "/healthz":
            self.send_error(404)
            return
        body = json.dumps(health()).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main() -> None:
    """Serve on port 8080 until interrupted."""
    with ThreadingHTTPServer(("0.0.0.0", 8080), Handler) as server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
