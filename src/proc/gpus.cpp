#include "proc/gpus.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "base/strings.hpp"

namespace lattice::proc {
namespace {

constexpr GpuVendor kVendors[] = {GpuVendor::nvidia, GpuVendor::amd, GpuVendor::intel};

// The variable each vendor's runtime reads its visible devices from.
std::string_view visible_devices_variable(GpuVendor vendor) {
  switch (vendor) {
    case GpuVendor::amd:
      return "ROCR_VISIBLE_DEVICES";
    case GpuVendor::intel:
      return "ZE_AFFINITY_MASK";
    case GpuVendor::nvidia:
      break;
  }
  return "CUDA_VISIBLE_DEVICES";
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// OpenCL's GPUVendor text ("NVIDIA Corporation", "Advanced Micro Devices, Inc.", "Intel(R)
// Corporation") or a PCI vendor's name or id.
std::optional<GpuVendor> vendor_of(std::string_view text) {
  std::string t = lower(text);
  if (t.find("nvidia") != std::string::npos || t.find("10de") != std::string::npos)
    return GpuVendor::nvidia;
  if (t.find("amd") != std::string::npos || t.find("advanced micro") != std::string::npos ||
      t.find("1002") != std::string::npos)
    return GpuVendor::amd;
  if (t.find("intel") != std::string::npos || t.find("8086") != std::string::npos)
    return GpuVendor::intel;
  return std::nullopt;
}

// A backend hwloc finds GPUs through: the vendor it serves (none: any, named by the device),
// how its device names start, and its rank among a vendor's backends (lower is better: the
// vendor's own runtime numbers its devices as its variable does).
struct Backend {
  std::string_view subtype;
  std::optional<GpuVendor> vendor;
  std::string_view prefix;
  int rank;
};
constexpr Backend kBackends[] = {
    {"CUDA", GpuVendor::nvidia, "cuda", 0}, {"NVML", GpuVendor::nvidia, "nvml", 1},
    {"RSMI", GpuVendor::amd, "rsmi", 0},    {"LevelZero", GpuVendor::intel, "ze", 0},
    {"OpenCL", std::nullopt, "opencl", 2},
};

// The device's number in its backend: cuda3 -> 3, opencl0d1 -> 1 (the device of its
// platform). A sub-device (ze0.1) or a name of another form has none.
std::optional<int> device_number(const Backend& backend, std::string_view name) {
  if (!starts_with(name, backend.prefix)) return std::nullopt;
  name.remove_prefix(backend.prefix.size());
  if (backend.subtype == "OpenCL") {
    auto d = name.find('d');
    if (d == std::string_view::npos || !parse_int(name.substr(0, d))) return std::nullopt;
    name.remove_prefix(d + 1);
  }
  auto n = parse_int(name);
  if (!n || *n < 0 || *n >= kMaxGpus) return std::nullopt;
  return static_cast<int>(*n);
}

std::string gpu_word(size_t n) { return n == 1 ? "GPU" : "GPUs"; }

}  // namespace

std::string_view gpu_vendor_name(GpuVendor vendor) {
  switch (vendor) {
    case GpuVendor::amd:
      return "amd";
    case GpuVendor::intel:
      return "intel";
    case GpuVendor::nvidia:
      break;
  }
  return "nvidia";
}

Result<GpuVendor> parse_gpu_vendor(std::string_view name) {
  for (GpuVendor vendor : kVendors)
    if (name == gpu_vendor_name(vendor)) return vendor;
  return make_error(cat("expected nvidia, amd or intel, got '", std::string(name), "'"));
}

std::vector<Gpu> sorted_gpus(std::vector<Gpu> gpus) {
  std::sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) {
    return std::pair(a.vendor, a.index) < std::pair(b.vendor, b.index);
  });
  return gpus;
}

std::string describe_gpus(const std::vector<Gpu>& gpus) {
  if (gpus.empty()) return "no GPUs";
  std::string parts;
  for (GpuVendor vendor : kVendors) {
    std::vector<int> indexes;
    for (const Gpu& gpu : gpus)
      if (gpu.vendor == vendor) indexes.push_back(gpu.index);
    if (indexes.empty()) continue;
    std::sort(indexes.begin(), indexes.end());
    std::string list;
    for (size_t i = 0; i < indexes.size();) {
      size_t run = 1;
      while (i + run < indexes.size() && indexes[i + run] == indexes[i] + static_cast<int>(run))
        ++run;
      list += cat(list.empty() ? "" : ",", indexes[i],
                  run > 1 ? cat("-", indexes[i + run - 1]) : std::string());
      i += run;
    }
    parts += cat(parts.empty() ? "" : ", ", gpu_vendor_name(vendor), " ", list);
  }
  return cat(gpus.size(), " ", gpu_word(gpus.size()), " (", parts, ")");
}

std::vector<Gpu> gpus_from_devices(const std::vector<GpuDevice>& devices) {
  struct Seen {
    GpuVendor vendor;
    int rank;
    Gpu gpu;
  };
  std::vector<Seen> seen;
  for (const GpuDevice& device : devices) {
    for (const Backend& backend : kBackends) {
      if (device.backend != backend.subtype) continue;
      auto vendor = backend.vendor ? backend.vendor : vendor_of(device.vendor);
      auto number = device_number(backend, device.name);
      if (vendor && number)
        seen.push_back(Seen{*vendor, backend.rank, {*vendor, *number, device.numa}});
    }
  }
  std::map<GpuVendor, int> best;
  for (const Seen& s : seen)
    if (!best.count(s.vendor) || s.rank < best[s.vendor]) best[s.vendor] = s.rank;
  std::vector<Gpu> out;
  for (const Seen& s : seen)
    if (s.rank == best[s.vendor] && std::none_of(out.begin(), out.end(), [&](const Gpu& g) {
          return g.vendor == s.vendor && g.index == s.gpu.index;
        }))
      out.push_back(s.gpu);
  return sorted_gpus(std::move(out));
}

Status parse_gpu_bind(std::string_view text, GpuRequest& request) {
  using Bind = GpuRequest::Bind;
  request.map.clear();
  if (text == "none") {
    request.bind = Bind::none;
    return {};
  }
  if (text == "closest") {
    request.bind = Bind::closest;
    return {};
  }
  constexpr std::string_view kMap = "map_gpu:";
  if (starts_with(text, kMap) && text.size() > kMap.size()) {
    for (const auto& piece : split(text.substr(kMap.size()), ',')) {
      auto n = parse_int(piece);
      if (!n || *n < 0 || *n >= kMaxGpus)
        return make_error(cat("--gpu-bind: '", piece, "' in map_gpu is not a GPU number"));
      request.map.push_back(static_cast<int>(*n));
    }
    request.bind = Bind::map_gpu;
    return {};
  }
  return make_error(
      cat("--gpu-bind: closest, none or map_gpu:LIST, got '", std::string(text), "'"));
}

Result<int> parse_gpu_count(std::string_view flag, std::string_view text) {
  auto n = parse_int(text);
  if (!n || *n < 1 || *n > kMaxGpus)
    return make_error(cat(flag, ": expected a whole number from 1 to ", kMaxGpus, ", got '",
                          std::string(text), "'"));
  return static_cast<int>(*n);
}

Status check_gpu_request(const GpuRequest& r) {
  using Bind = GpuRequest::Bind;
  if (r.per_task > 0 && r.per_node > 0)
    return make_error("give --gpus-per-task or --gpus-per-node, not both");
  if ((r.bind == Bind::closest || r.bind == Bind::none) && r.per_task == 0 && r.per_node == 0)
    return make_error(cat("--gpu-bind ", r.bind == Bind::closest ? "closest" : "none",
                          " needs --gpus-per-task or --gpus-per-node"));
  if (r.bind == Bind::map_gpu && r.map.empty())
    return make_error("--gpu-bind: map_gpu names no GPU");
  if (r.bind == Bind::map_gpu && (r.per_node > 0 || r.per_task > 1))
    return make_error(cat("--gpu-bind map_gpu gives each rank the one GPU it names: it takes no ",
                          r.per_node > 0 ? "--gpus-per-node" : "--gpus-per-task above 1"));
  return {};
}

Result<std::vector<std::vector<Gpu>>> assign_gpus(const GpuRequest& request,
                                                  const std::vector<Gpu>& gpus,
                                                  const std::vector<int>& rank_numa,
                                                  std::string_view node) {
  using Bind = GpuRequest::Bind;
  const size_t ranks = rank_numa.size();
  std::vector<std::vector<Gpu>> out(ranks);
  if (!request.any()) return out;
  if (auto checked = check_gpu_request(request); !checked) return checked.error();
  auto refuse = [&](const std::string& what) {
    return make_error(cat("node ", node, " has ", describe_gpus(gpus), ": ", what));
  };
  auto on_numa = [](const Gpu& gpu, int numa) { return numa >= 0 && gpu.numa == numa; };

  if (request.bind == Bind::map_gpu) {
    for (size_t i = 0; i < ranks; ++i) {
      const int place = request.map[i % request.map.size()];
      if (static_cast<size_t>(place) >= gpus.size())
        return refuse(cat("--gpu-bind map_gpu names GPU ", place, " (they are numbered from 0)"));
      out[i] = {gpus[static_cast<size_t>(place)]};
    }
    return out;
  }

  if (request.per_node > 0) {
    const auto wanted = static_cast<size_t>(request.per_node);
    if (wanted > gpus.size()) return refuse(cat("--gpus-per-node ", wanted, " asks for ", wanted));
    const std::vector<Gpu> share(gpus.begin(), gpus.begin() + static_cast<long>(wanted));
    for (size_t i = 0; i < ranks; ++i) {
      if (request.bind == Bind::closest)
        for (const Gpu& gpu : share)
          if (on_numa(gpu, rank_numa[i])) out[i].push_back(gpu);
      if (out[i].empty()) out[i] = share;  // none closer than the others
    }
    return out;
  }

  const auto each = static_cast<size_t>(request.per_task);
  const size_t needed = ranks * each;
  if (needed > gpus.size())
    return refuse(cat(ranks, ranks == 1 ? " rank" : " ranks", " of ", each, " ", gpu_word(each),
                      " (--gpus-per-task ", each, ") need ", needed));
  if (request.bind == Bind::none) {
    const std::vector<Gpu> taken(gpus.begin(), gpus.begin() + static_cast<long>(needed));
    for (auto& rank : out) rank = taken;
    return out;
  }
  std::vector<bool> given(gpus.size(), false);
  for (size_t i = 0; i < ranks; ++i) {
    // closest: the rank's NUMA node's GPUs first; then (and always otherwise) the node's order.
    for (int pass = request.bind == Bind::closest ? 0 : 1; pass < 2; ++pass)
      for (size_t g = 0; g < gpus.size() && out[i].size() < each; ++g)
        if (!given[g] && (pass == 1 || on_numa(gpus[g], rank_numa[i]))) {
          given[g] = true;
          out[i].push_back(gpus[g]);
        }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> gpu_environment(const std::vector<Gpu>& gpus) {
  std::vector<std::pair<std::string, std::string>> out;
  for (GpuVendor vendor : kVendors) {
    std::string list;
    for (const Gpu& gpu : gpus)
      if (gpu.vendor == vendor) list += cat(list.empty() ? "" : ",", gpu.index);
    if (!list.empty()) out.emplace_back(std::string(visible_devices_variable(vendor)), list);
  }
  return out;
}

}  // namespace lattice::proc
