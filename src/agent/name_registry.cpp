#include "agent/name_registry.hpp"

#include <algorithm>

#include "base/strings.hpp"
#include "pmi/limits.hpp"

namespace lattice::agent {
namespace {

bool in_scope(NameScope scope, const std::string& nspace, int rank, int node, const NameAsk& who) {
  switch (scope) {
    case NameScope::launch:
      return true;
    case NameScope::node:
      return node == who.node;
    case NameScope::nspace:
      return nspace == who.nspace;
    case NameScope::proc:
      return nspace == who.nspace && rank == who.rank;
  }
  return false;
}

std::string not_published(const std::string& name) {
  return cat("service '", name, "' is not published");
}

}  // namespace

Result<std::string> NameRegistry::apply(pmi::NameOp op, const std::string& name,
                                        const std::string& port) {
  NameAsk request;
  request.op = op;
  request.name = name;
  request.value = port;
  auto answers = ask(0, request, 0);
  return std::move(answers.front().result);  // never waits: answered at once
}

std::vector<NameRegistry::Answer> NameRegistry::ask(Id id, const NameAsk& ask, uint64_t now_ms) {
  std::vector<Answer> out;
  // The engine or the PMIx tier checked these on the rank's node; a peer's message is checked
  // again here.
  size_t max_value = ask.pmix ? kMaxPmixNameValueBytes : pmi::kMaxValueBytes;
  if ((ask.name.empty() && !(ask.pmix && ask.op == pmi::NameOp::unpublish)) ||
      ask.name.size() > pmi::kMaxServiceNameBytes || ask.value.size() > max_value) {
    out.push_back({id, make_error("a malformed name request")});
    return out;
  }
  switch (ask.op) {
    case pmi::NameOp::publish: {
      auto published = publish(ask);
      bool ok = published.ok();
      out.push_back({id, std::move(published)});
      if (!ok) return out;
      // The waiters it satisfies, oldest first; a first-read name satisfies one at most.
      for (auto it = waiters_.begin(); it != waiters_.end() && names_.count(ask.name);) {
        if (it->ask.name != ask.name) {
          ++it;
          continue;
        }
        if (auto value = read(it->ask)) {
          out.push_back({it->id, std::move(*value)});
          it = waiters_.erase(it);
        } else {
          ++it;
        }
      }
      return out;
    }
    case pmi::NameOp::unpublish:
      out.push_back({id, unpublish(ask)});
      return out;
    case pmi::NameOp::lookup:
      if (auto value = read(ask)) {
        out.push_back({id, std::move(*value)});
      } else if (ask.deadline_ms <= now_ms) {
        out.push_back({id, make_error(not_published(ask.name))});
      } else if (waiters_.size() >= kMaxNameWaiters) {
        out.push_back(
            {id, make_error(cat("this launch has ", kMaxNameWaiters, " lookups waiting already"))});
      } else {
        waiters_.push_back({id, ask});
      }
      return out;
  }
  out.push_back({id, make_error("unknown name operation")});
  return out;
}

Result<std::string> NameRegistry::publish(const NameAsk& ask) {
  if (names_.count(ask.name))
    return make_error(cat("service '", ask.name, "' is already published"));
  if (names_.size() >= kMaxPublishedNames)
    return make_error(cat("this launch has published ", kMaxPublishedNames, " names already"));
  size_t bytes = ask.name.size() + ask.value.size();
  if (bytes_ + bytes > kMaxPublishedBytes)
    return make_error(cat("this launch's published names hold ", bytes_, " bytes already"));
  bytes_ += bytes;
  names_.emplace(ask.name,
                 Entry{ask.value, ask.nspace, ask.rank, ask.node, ask.scope, ask.first_read});
  return std::string();
}

Result<std::string> NameRegistry::unpublish(const NameAsk& ask) {
  // PMIx: only the publisher takes its names back; PMI-1/PMI-2 (as Hydra): any rank.
  auto mine = [&](const Entry& e) {
    return !ask.pmix || (e.nspace == ask.nspace && e.rank == ask.rank);
  };
  if (ask.name.empty()) {  // PMIx_Unpublish without keys: all of the asker's
    for (auto it = names_.begin(); it != names_.end();) {
      if (mine(it->second)) {
        bytes_ -= it->first.size() + it->second.value.size();
        it = names_.erase(it);
      } else {
        ++it;
      }
    }
    return std::string();
  }
  auto it = names_.find(ask.name);
  if (it == names_.end() || !mine(it->second)) return make_error(not_published(ask.name));
  bytes_ -= it->first.size() + it->second.value.size();
  names_.erase(it);
  return std::string();
}

std::optional<std::string> NameRegistry::read(const NameAsk& ask) {
  auto it = names_.find(ask.name);
  if (it == names_.end()) return std::nullopt;
  const Entry& e = it->second;
  // The publisher's scope says who may see it; the lookup's, whose names it looks at.
  if (!in_scope(e.scope, e.nspace, e.rank, e.node, ask) ||
      !in_scope(ask.scope, ask.nspace, ask.rank, ask.node,
                NameAsk{{}, {}, {}, {}, e.nspace, e.rank, e.node, {}, false, 0}))
    return std::nullopt;
  std::string value = e.value;
  if (e.first_read) {
    bytes_ -= it->first.size() + e.value.size();
    names_.erase(it);
  }
  return value;
}

std::vector<NameRegistry::Answer> NameRegistry::expire(uint64_t now_ms) {
  std::vector<Answer> out;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (it->ask.deadline_ms > now_ms) {
      ++it;
      continue;
    }
    out.push_back({it->id, make_error(cat("service '", it->ask.name,
                                          "' was not published within the lookup's time"))});
    it = waiters_.erase(it);
  }
  return out;
}

std::optional<uint64_t> NameRegistry::next_deadline() const {
  std::optional<uint64_t> out;
  for (const auto& w : waiters_)
    if (!out || w.ask.deadline_ms < *out) out = w.ask.deadline_ms;
  return out;
}

std::vector<NameRegistry::Answer> NameRegistry::drop_waiters(const std::string& why) {
  std::vector<Answer> out;
  for (auto& w : waiters_) out.push_back({w.id, make_error(why)});
  waiters_.clear();
  return out;
}

}  // namespace lattice::agent
