#include "rogue_args.hpp"

#include "base/strings.hpp"

namespace lattice::rogue {

const char* kUsage =
    "usage: lattice-test-rogue --key FILE --identity ROLE:NAME --connect HOST:PORT\n"
    "                          [--launch ID] [--env NAME=VALUE]... [--pmi pmix]\n"
    "                          [--vendor-file PATH] [--protocol N] ACTION [ARGS...]\n"
    "       lattice-test-rogue --key FILE --identity agent:NAME --listen HOST:PORT\n"
    "                          forge-exit OWN_RANK RANK NODE STATUS DELAY_MS\n"
    "                          (after DELAY_MS asks the launcher two requests, then reports)\n"
    "actions: abort | signal SIG | status | fence EPOCH FROM [up|down] KEY=VALUE... |\n"
    "         fence-packed EPOCH FROM up|down HEX (raw packed entries) |\n"
    "         fence-error EPOCH FROM MESSAGE | launch | trickle SECONDS | hold SECONDS |\n"
    "         relayed-launch NODE,NODE,... INDEX (fanout 2, to node INDEX) |\n"
    "         ended NODE | lost NODE (a relayed launch's reports about node NODE) |\n"
    "         seed-launch NODE=HOST:PORT,... INDEX TASKS_PER_NODE FIRST_RANK WORLD_SIZE\n"
    "                     PROGRAM [ARGS...] (lattice-api's request to node INDEX, as this\n"
    "                     process's user; prints the answer and the reports until the end)\n"
    "       lattice-test-rogue --door PATH door-launch ALLOC_ID NODE=HOST:PORT,... PROGRAM\n"
    "                     (a hand-made request on an agent's user door, no handshake: one rank\n"
    "                     of PROGRAM in allocation ALLOC_ID with these peers, as this process's\n"
    "                     user; prints the answer)\n"
    "       lattice-test-rogue --door PATH door-signal LAUNCH_ID SIGNAL\n"
    "--protocol N: every message stamped with protocol version N (a peer of another release)\n"
    "--handshake 2: open links with handshake 2 (a 0.2.0 peer)\n"
    "--identity-file FILE, --authority FILE: a certified identity, and the authority this side\n"
    "                     requires the peer's certificate from (handshake 3)\n"
    "--sign-with FILE, --launcher-name NAME: relayed-launch signed as the launcher of identity\n"
    "                     FILE, and naming NAME as its launcher (default lattice@rogue:1)\n";

bool parse(int argc, char** argv, Args& a) {
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
    std::string flag = argv[i], v = argv[i + 1];
    if (flag == "--key")
      a.key = v;
    else if (flag == "--identity")
      a.identity = v;
    else if (flag == "--launch")
      a.launch = v;
    else if (flag == "--env")
      a.env.push_back(v);
    else if (flag == "--door")
      a.door = v;
    else if (flag == "--pmi" && v == "pmix")
      a.pmix = true;
    else if (flag == "--vendor-file")
      a.vendor_file = v;
    else if (flag == "--handshake" && (v == "2" || v == "3"))
      a.handshake = static_cast<uint8_t>(v[0] - '0');
    else if (flag == "--identity-file")
      a.identity_file = v;
    else if (flag == "--authority")
      a.authority_file = v;
    else if (flag == "--sign-with")
      a.sign_with = v;
    else if (flag == "--launcher-name")
      a.launcher_name = v;
    else if (flag == "--protocol" && parse_int(v))
      a.protocol = static_cast<uint16_t>(*parse_int(v));
    else if (flag == "--connect" || flag == "--listen") {
      a.listen = flag == "--listen";
      if (a.listen && v.size() > 2 && v.compare(v.size() - 2, 2, ":0") == 0) {
        a.host = v.substr(0, v.size() - 2);  // a port the system picks
        continue;
      }
      auto hp = parse_host_port(v);
      if (!hp) return false;
      a.host = hp->host;
      a.port = hp->port;
    } else {
      return false;
    }
  }
  if (i >= argc || (a.door.empty() && (a.key.empty() || a.identity.find(':') == std::string::npos ||
                                       (!a.port && !a.listen))))
    return false;
  a.action = argv[i];
  a.rest.assign(argv + i + 1, argv + argc);
  return true;
}

}  // namespace lattice::rogue
