#include "agent/agent_flags.hpp"

#include "base/command_line.hpp"
#include "base/strings.hpp"

namespace lattice::agent {

const char* const kAgentUsage =
    "usage: lattice-agentd [--config PATH] [--listen HOST:PORT] [--node-id NAME]\n"
    "                      [--key-file FILE] [--allow-root-jobs]\n"
    "                      [--admin-socket PATH] [--pmi-socket-dir DIR] [--log-level LEVEL]\n"
    "                      [--log-file FILE]\n"
    "                      [--ready-fd FD] [--check-config] [--version] [--help]\n"
    "       lattice-agentd --generate-key FILE\n"
    "       lattice-agentd --generate-ca FILE\n"
    "       lattice-agentd --certify agent:NODE_ID|launcher:NAME --ca FILE --out FILE\n"
    "                      [--days N]\n"
    "Flags override the config file (default /etc/lattice/agent.yaml when it exists).\n"
    "A listen address (--listen, or listen: in the config) is required.\n";

Result<AgentFlags> parse_agent_flags(const std::vector<std::string>& args) {
  AgentFlags flags;
  CLI::App cli;
  Options w(cli);
  w.text("--config", flags.config_path);
  w.text("--generate-key", flags.generate_key);
  w.text("--generate-ca", flags.generate_ca);
  w.text("--certify", flags.certify);
  w.text("--ca", flags.ca_file);
  w.text("--out", flags.out_file);
  w.value("--days", [&flags](const std::string& flag, const std::string& v) -> Status {
    auto days = parse_int(v);
    if (!days || *days < 1 || *days > 36500)
      return make_error(cat(flag, ": expected a number of days from 1 to 36500, got '", v, "'"));
    flags.days = *days;
    return {};
  });
  w.value("--ready-fd", [&flags](const std::string& flag, const std::string& v) -> Status {
    auto fd = parse_int(v);
    if (!fd || *fd < 0 || *fd > 1 << 20)
      return make_error(cat(flag, ": expected a file descriptor number, got '", v, "'"));
    flags.ready_fd = static_cast<int>(*fd);
    return {};
  });
  // Checked when applied to the config (main's apply), which names the flag.
  for (const char* name : {"--listen", "--node-id", "--admin-socket", "--pmi-socket-dir",
                           "--log-level", "--log-file", "--key-file"})
    w.value(name, [&flags, name](const std::string&, const std::string& v) -> Status {
      flags.overrides.emplace_back(name, v);
      return {};
    });
  w.flag("--allow-root-jobs", [&flags] { flags.overrides.emplace_back("--allow-root-jobs", ""); });
  w.flag("--check-config", [&flags] { flags.check_config = true; });
  w.flag("--version", [&flags] { flags.version = true; });
  auto line = w.parse(args);
  if (!line) return line.error();
  flags.help = line->help;
  if (!flags.certify.empty() && (flags.ca_file.empty() || flags.out_file.empty()))
    return make_error("--certify needs --ca FILE (the authority's secret key) and --out FILE");
  if (flags.certify.empty() && (!flags.ca_file.empty() || !flags.out_file.empty()))
    return make_error("--ca and --out go with --certify");
  if (!line->rest.empty())
    return make_error(cat("unexpected argument '", line->rest.front(), "' (flags only)"));
  return flags;
}

}  // namespace lattice::agent
