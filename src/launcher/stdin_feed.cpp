#include "launcher/stdin_feed.hpp"

#include <algorithm>
#include <utility>

#include "wire/control.hpp"

namespace lattice::launcher {
namespace {

// Stdin sent to a node beyond what its input ranks took (StdinTaken) before the launcher stops
// reading its own stdin: a rank reading slowly holds the input back, and nothing is dropped.
constexpr uint64_t kStdinWindowBytes = uint64_t{8} << 20;

}  // namespace

StdinFeed::StdinFeed(net::Loop& loop, int nodes, const FanOut& fan_out,
                     const policy::JobPolicy& policy, AgentLinks& links, std::string launch_id)
    : loop_(loop),
      fan_out_(fan_out),
      policy_(policy),
      links_(links),
      launch_id_(std::move(launch_id)),
      nodes_(static_cast<size_t>(nodes)) {}

StdinFeed::~StdinFeed() = default;

Status StdinFeed::start(std::vector<int> nodes) {
  targets_ = std::move(nodes);
  auto source = InputSource::open(
      loop_, 0, [this](std::string_view data) { send(data, false); }, [this] { send({}, true); });
  if (!source) {
    send({}, true);
    return source.error();
  }
  source_ = std::move(source.value());
  return {};
}

void StdinFeed::send(std::string_view data, bool eof) {
  std::vector<int> links;  // once per link: a relay passes it to every input node below
  for (int node : targets_) {
    const int link = fan_out_.link_of(node);
    if (std::find(links.begin(), links.end(), link) == links.end()) {
      links.push_back(link);
      links_.notify(link, wire::stdin_chunk(launch_id_, data, eof));
    }
    at(node).sent += data.size();
  }
  pace();
}

void StdinFeed::taken(int node, uint64_t bytes) {
  // Never more than was sent: a confused agent cannot open the window wider.
  at(node).taken = std::min<uint64_t>(at(node).sent, bytes);
  pace();
}

void StdinFeed::pace() {
  if (!source_) return;
  bool behind = std::any_of(targets_.begin(), targets_.end(), [this](int node) {
    const Node& n = at(node);
    return n.reports_taken && policy_.live(node) && n.sent - n.taken > kStdinWindowBytes;
  });
  if (behind)
    source_->pause();
  else
    source_->resume();
}

}  // namespace lattice::launcher
