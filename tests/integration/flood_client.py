"""A connection flood, as a hostile client without the key makes one: up to COUNT connections to
HOST:PORT, from the SOURCES addresses in turn (bound before connecting), open and silent; each
one the agent closes (refused, or its handshake deadline passed) is opened again at once. Runs
until SIGTERM or SECONDS, then prints its figures as one JSON line: attempts (connections
opened), closed (by the other end), peak (most open at once).

    python3 flood_client.py HOST PORT COUNT SECONDS SOURCE[,SOURCE...]

Python 3 standard library only; tests run it as another user (or in another network namespace).
"""
import json
import resource
import select
import signal
import socket
import sys
import time

IP_BIND_ADDRESS_NO_PORT = 24  # the port is picked at connect(): more connections per source


def main():
    host, port, count, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    sources = sys.argv[5].split(",")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    count = min(count, hard - 32)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    poller = select.poll()
    socks = {}
    figures = {"attempts": 0, "closed": 0, "peak": 0}
    turn = [0]

    def open_one():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
        s.bind((sources[turn[0] % len(sources)], 0))
        turn[0] += 1
        s.setblocking(False)
        try:
            s.connect((host, port))
        except BlockingIOError:
            pass  # in progress; a failure shows as POLLERR like any close
        except OSError:
            s.close()
            return False
        figures["attempts"] += 1
        socks[s.fileno()] = s
        poller.register(s, select.POLLIN | select.POLLERR | select.POLLHUP)
        return True

    deadline = time.monotonic() + seconds
    while not stopping and time.monotonic() < deadline:
        while len(socks) < count and not stopping and open_one():
            pass
        figures["peak"] = max(figures["peak"], len(socks))
        for fd, _ in poller.poll(100):
            s = socks.pop(fd)
            poller.unregister(fd)
            s.close()  # silent clients: anything readable is the end
            figures["closed"] += 1
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
