#include "proc/resource_limits.hpp"

#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "base/strings.hpp"

namespace lattice::proc {
namespace {

struct Entry {
  Resource resource;
  const char* name;
  int rlimit;
};
constexpr Entry kResources[kResourceCount] = {
    {Resource::as, "AS", RLIMIT_AS},
    {Resource::core, "CORE", RLIMIT_CORE},
    {Resource::cpu, "CPU", RLIMIT_CPU},
    {Resource::data, "DATA", RLIMIT_DATA},
    {Resource::fsize, "FSIZE", RLIMIT_FSIZE},
    {Resource::memlock, "MEMLOCK", RLIMIT_MEMLOCK},
    {Resource::nofile, "NOFILE", RLIMIT_NOFILE},
    {Resource::nproc, "NPROC", RLIMIT_NPROC},
    {Resource::rss, "RSS", RLIMIT_RSS},
    {Resource::stack, "STACK", RLIMIT_STACK},
};

const Entry& entry(Resource r) { return kResources[static_cast<int>(r)]; }

// Upper case, without the spaces around it.
std::string normalised(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '\t')
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view resource_name(Resource r) { return entry(r).name; }
int rlimit_of(Resource r) { return entry(r).rlimit; }

std::vector<Limit> own_soft_limits() {
  std::vector<Limit> out;
  for (const auto& e : kResources) {
    rlimit limit{};
    if (::getrlimit(static_cast<__rlimit_resource_t>(e.rlimit), &limit) != 0) continue;
    out.push_back(
        Limit{e.resource, limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : uint64_t{limit.rlim_cur}});
  }
  return out;
}

uint32_t own_umask() {
  mode_t mask = ::umask(0);  // the only way to read it; set back at once
  ::umask(mask);
  return mask;
}

Result<std::vector<Resource>> parse_propagated(std::string_view text) {
  std::string all = normalised(text);
  std::vector<Resource> out;
  if (all == "NONE") return out;
  if (all == "ALL") {
    for (const auto& e : kResources) out.push_back(e.resource);
    return out;
  }
  for (const auto& name : split(all, ',')) {
    auto it = std::find_if(std::begin(kResources), std::end(kResources),
                           [&](const Entry& e) { return name == e.name; });
    if (it == std::end(kResources))
      return make_error(cat("'", name,
                            "' is not a resource limit (ALL, NONE, or some of AS, CORE, "
                            "CPU, DATA, FSIZE, MEMLOCK, NOFILE, NPROC, RSS, STACK)"));
    if (std::find(out.begin(), out.end(), it->resource) == out.end()) out.push_back(it->resource);
  }
  return out;
}

std::string describe_propagated(const std::vector<Resource>& resources) {
  if (resources.empty()) return "NONE";
  if (resources.size() == kResourceCount) return "ALL";
  std::vector<std::string> names;
  for (auto r : resources) names.emplace_back(resource_name(r));
  return join(names, ",");
}

}  // namespace lattice::proc
