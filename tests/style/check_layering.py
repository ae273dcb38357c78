"""Layering as a build fact: every #include in src/<layer>/ must name a layer (or a third-party
library) that <layer> may use, as the layer table in docs/architecture.md says. Run by `meson test`
(test `layering`); prints each forbidden include with its file and line and exits 1.

Usage: check_layering.py SOURCE_ROOT"""
import os
import re
import shutil
import sys
import tempfile

# Layers each layer may include (itself always). Siblings do not include each other;
# agent/ and launcher/ are where they meet, and never include each other.
ALLOWED = {
    "base": set(),
    "pmi": {"base"},
    "pmix": {"base"},
    "fence": {"base"},
    "proc": {"base"},
    "policy": {"base", "proc"},
    "config": {"base", "proc"},
    "admin": {"base"},
    "rpc": {"base"},
    "net": {"base"},
    "secure": {"base"},
    "link": {"base", "net", "rpc", "secure"},
    # fence/ for its chunks, pmi/ for the name operations, secure/ for the CXI key's guarded
    # memory: what fence, name and launch messages carry.
    "wire": {"base", "pmi", "fence", "proc", "policy", "rpc", "secure"},
    "fabric": {"base", "net", "secure"},
    "agent": {"base", "pmi", "pmix", "fence", "proc", "policy", "config", "admin", "rpc", "net",
              "secure", "link", "wire"},
    # fence/ for its tree's shape: a relayed launch travels down the fence tree; admin/ for the
    # admin socket's protocol, whose client `lattice admin` is; pmix/ for the loader of
    # libpmix's PMIx_server_setup_application (RFC0029).
    "launcher": {"base", "proc", "policy", "config", "rpc", "net", "secure", "link", "wire",
                 "fabric", "fence", "admin", "pmix"},
}

# Third-party headers (by prefix) and the layers that may include them.
THIRD_PARTY = {
    "<uv.h>": {"net", "agent", "launcher"},
    "<capnp/": {"rpc", "agent", "launcher"},
    "<kj/": {"rpc", "agent", "launcher"},
    '"lattice.capnp.h"': {"rpc", "wire", "agent", "launcher"},
    "<sodium.h>": {"secure"},
    "<pmix": {"pmix"},
    "<hwloc": {"agent"},
    "<yaml-cpp/": {"config"},
    "<curl/": {"fabric"},
    "<nlohmann/": {"fabric", "admin"},
    "<systemd/": {"agent"},
    # CLI11, through base/command_line.hpp only (the command lines' one front).
    "<CLI/": {"base"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+([<"][^>"]+[>"])')


def problems(root):
    src = os.path.join(root, "src")
    for layer in sorted(os.listdir(src)):
        if not os.path.isdir(os.path.join(src, layer)):
            continue
        if layer not in ALLOWED:
            yield f"src/{layer}/: a layer the layering check does not know (add it to ALLOWED)"
            continue
        for dirpath, _, files in os.walk(os.path.join(src, layer)):
            for name in sorted(files):
                if not name.endswith((".hpp", ".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                # libuv stays out of net's public headers: only its .cpp files and detail/ see it.
                public_net_header = (layer == "net" and name.endswith(".hpp")
                                     and os.sep + "detail" not in dirpath[len(src):])
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        where = f"{rel}:{number}: {target}"
                        for prefix, users in THIRD_PARTY.items():
                            if target.startswith(prefix) and layer not in users:
                                yield f"{where}: {layer}/ may not use it"
                        if target == "<uv.h>" and public_net_header:
                            yield f"{where}: a public net header must not expose libuv"
                        inner = re.match(r'"([a-z_]+)/', target)
                        if inner and inner.group(1) in ALLOWED and inner.group(1) != layer \
                                and inner.group(1) not in ALLOWED[layer]:
                            yield f"{where}: {layer}/ may not include {inner.group(1)}/"


def self_test():
    """The check must catch what it is for: a small tree with three known faults."""
    tmp = tempfile.mkdtemp()
    try:
        for layer, name, text in (("pmi", "a.cpp", '#include "net/stream.hpp"\n#include <sodium.h>\n'),
                                  ("net", "b.hpp", "#include <uv.h>\n"),
                                  ("net", "b.cpp", "#include <uv.h>\n")):
            os.makedirs(os.path.join(tmp, "src", layer), exist_ok=True)
            with open(os.path.join(tmp, "src", layer, name), "w") as f:
                f.write(text)
        return len(list(problems(tmp))) == 3
    finally:
        shutil.rmtree(tmp)


def main():
    if not self_test():
        print("layering: the check itself misses known faults")
        return 1
    found = list(problems(sys.argv[1]))
    for p in found:
        print(p)
    print(f"layering: {len(found)} forbidden include(s)" if found else "layering: ok")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
