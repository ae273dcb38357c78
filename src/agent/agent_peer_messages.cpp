// What the other nodes of a launch send it: fence chunks (held when they come before the
// launch), name and direct-modex calls, escape-hatch messages. Each is judged against the
// sender's proven place in the launch (authority.hpp) before the launch sees it.
#include "agent/agent.hpp"
#include "agent/pmix_messages.hpp"
#include "base/log.hpp"
#include "wire/connect_codec.hpp"
#include "wire/exec_codec.hpp"
#include "wire/fence_chunk.hpp"
#include "wire/modex.hpp"
#include "wire/names_codec.hpp"
#include "wire/spawn_codec.hpp"

namespace lattice::agent {

void Agent::fence_message(Result<wire::FenceMessage> decoded, const Sender& sender) {
  if (!decoded) {
    // As the Reducer treats a chunk it cannot place: dropped, and the fence's deadline ends a
    // launch whose fence then cannot complete. Only an authenticated agent gets this far.
    LAT_LOG(warn, "fence", decoded.error().message, " (from ", secure::describe(sender.identity),
            "): dropped", log_fields({{"node", config_.node_id}, {"peer", sender.identity.name}}));
    return;
  }
  wire::FenceMessage message = std::move(decoded.value());
  if (LaunchEntry* entry = find_launch(message.launch_id))
    return deliver_fence(*entry, std::move(message), sender);
  if (sender.identity.role != secure::Role::agent) {
    LAT_LOG(warn, "auth", "a fence chunk for unknown launch ", message.launch_id, " from ",
            secure::describe(sender.identity), " dropped: only agents send fence chunks",
            log_fields({{"launch", message.launch_id},
                        {"node", config_.node_id},
                        {"peer", sender.identity.name}}));
    return;
  }
  std::string id = message.launch_id;
  hold_early(id, EarlyMessage{std::move(message), std::nullopt, sender});
}

void Agent::name_request(const Sender& sender, uint64_t request_id,
                         const wire::NameRequest& request) {
  rpc::Session& session = *session_of(sender.conn);
  LaunchEntry* entry = find_launch(request.launch_id);
  if (!entry) {
    // The names lived with the head's part of the launch: the rank hears at once that they are
    // gone, rather than waiting for an answer that cannot come.
    return session.respond_error(
        request_id, ended_member(request.launch_id, sender)
                        ? cat(ended_here(request.launch_id), ", and its published names with it")
                        : cat("no launch '", request.launch_id, "' on ", config_.node_id));
  }
  auto from = may_ask_name(entry->launch->spec(), sender);
  if (!from) {
    LAT_LOG(warn, "auth", from.error().message,
            log_fields({{"launch", request.launch_id},
                        {"node", config_.node_id},
                        {"peer", sender.identity.name}}));
    return session.respond_error(request_id, from.error().message);
  }
  // A PMIx lookup may wait for its name: the answer may come after the link has gone.
  entry->launch->name_asked(
      *from, request,
      [this, conn = sender.conn, request_id, pmix = request.pmix](const Result<std::string>& port) {
        link::Connection* link = connection(conn);
        if (!link) return;
        if (port)
          link->session().respond(request_id, wire::name_answer(port.value(), pmix));
        else
          link->session().respond_error(request_id, port.error().message);
      });
}

void Agent::collective_request(const Sender& sender, uint64_t request_id,
                               Result<wire::CollectiveRequest> request) {
  rpc::Session& session = *session_of(sender.conn);
  if (!request) {
    LAT_LOG(warn, "pmix", request.error().message, " (from ", secure::describe(sender.identity),
            ")", log_fields({{"node", config_.node_id}, {"peer", sender.identity.name}}));
    return session.respond_error(request_id, request.error().message);
  }
  LaunchEntry* entry = find_launch(request->launch_id);
  if (!entry)
    return session.respond_error(
        request_id, ended_member(request->launch_id, sender)
                        ? ended_here(request->launch_id)
                        : cat("no launch '", request->launch_id, "' on ", config_.node_id));
  auto from = may_enter_collective(entry->launch->spec(), sender);
  if (!from) {
    LAT_LOG(warn, "auth", from.error().message,
            log_fields({{"launch", request->launch_id},
                        {"node", config_.node_id},
                        {"peer", sender.identity.name}}));
    return session.respond_error(request_id, from.error().message);
  }
  // Answered when every participating node has entered: perhaps after the link has gone.
  entry->launch->collective_asked(
      *from, std::move(*request),
      [this, conn = sender.conn, request_id](Result<wire::CollectiveAnswer> data) {
        link::Connection* link = connection(conn);
        if (!link) return;
        if (data)
          link->session().respond(request_id, wire::collective_answer(*data));
        else
          link->session().respond_error(request_id, data.error().message);
      });
}

void Agent::modex_request(const Sender& sender, uint64_t request_id,
                          const wire::ModexRequest& request) {
  LaunchEntry* entry = find_launch(request.launch_id);
  if (!entry) {
    // The launch ended here, so it is ending everywhere; or it has not started here yet,
    // which libpmix's async modex does not wait for (said in lattice(1)'s PMIx section): the
    // asker's deadline answers it.
    LAT_LOG(debug, "pmix", "direct modex for unknown launch ", request.launch_id, " dropped");
    return;
  }
  // A spawned launch's family runs wherever it does: the first launch's nodes are known here.
  const auto& spawned_by = entry->launch->spec().spawned_by;
  LaunchEntry* parent = spawned_by ? find_launch(spawned_by->family_id()) : nullptr;
  auto from = may_ask_modex(entry->launch->spec(), request.rank, sender,
                            parent ? &parent->launch->spec() : nullptr);
  if (!from) {
    LAT_LOG(warn, "auth", from.error().message,
            log_fields({{"launch", request.launch_id},
                        {"node", config_.node_id},
                        {"peer", sender.identity.name}}));
    return session_of(sender.conn)->respond_error(request_id, from.error().message);
  }
  // libpmix answers later, perhaps after the link or the launch has gone.
  entry->launch->modex_asked(*from, request.rank,
                             [this, conn = sender.conn, request_id](Result<std::string> data) {
                               link::Connection* link = connection(conn);
                               if (!link) return;
                               if (data)
                                 link->session().respond(request_id, wire::modex_answer(*data));
                               else
                                 link->session().respond_error(request_id, data.error().message);
                             });
}

void Agent::spawn_request(const Sender& sender, uint64_t request_id,
                          schema::PmixSpawn::Reader message) {
  auto respond_error = [&](const std::string& why) {
    session_of(sender.conn)->respond_error(request_id, why);
  };
  auto request = wire::decode_spawn(message);
  if (!request) return respond_error(request.error().message);
  LaunchEntry* entry = find_launch(request->launch_id);
  if (!entry)
    return respond_error(cat("no launch '", request->launch_id, "' on ", config_.node_id));
  const LaunchSpec& spec = entry->launch->spec();
  auto from = member_node(spec, sender, "a spawn");
  if (!from) {
    LAT_LOG(warn, "auth", from.error().message,
            log_fields({{"launch", request->launch_id},
                        {"node", config_.node_id},
                        {"peer", sender.identity.name}}));
    return respond_error(from.error().message);
  }
  if (spec.head_node != spec.node_index) return respond_error("a spawn goes to the launch's head");
  // The rank must be one of the asking node's: a node speaks for its own ranks only.
  if (request->rank >= static_cast<uint32_t>(spec.world_size) ||
      spec.rank_nodes[request->rank] != *from)
    return respond_error(cat("rank ", request->rank, " is not on the asking node"));
  entry->launch->spawn_asked(std::move(request.value()), [this, conn = sender.conn,
                                                          request_id](Result<std::string> child) {
    link::Connection* link = connection(conn);
    if (!link) return;
    if (child)
      link->session().respond(request_id, wire::spawn_answer({*child, {}}));
    else
      link->session().respond_error(request_id, child.error().message);
  });
}

void Agent::family_notice(const Sender& sender, uint64_t request_id,
                          schema::PmixFamily::Reader message) {
  auto respond_error = [&](const std::string& why) {
    session_of(sender.conn)->respond_error(request_id, why);
  };
  auto notice = wire::decode_family_notice(message);
  if (!notice) return respond_error(notice.error().message);
  LaunchEntry* entry = find_launch(notice->launch_id);
  // Where the parent's ranks have all exited, none is left to reach the children from.
  if (!entry && ended_member(notice->launch_id, sender))
    return session_of(sender.conn)->respond(request_id, rpc::Outgoing());
  if (!entry) return respond_error(cat("no launch '", notice->launch_id, "' on ", config_.node_id));
  const LaunchSpec& spec = entry->launch->spec();
  auto from = may_tell_family(spec, sender);
  if (!from) {
    LAT_LOG(warn, "auth", from.error().message,
            log_fields({{"launch", notice->launch_id},
                        {"node", config_.node_id},
                        {"peer", sender.identity.name}}));
    return respond_error(from.error().message);
  }
  auto respond = [this, conn = sender.conn, request_id](Status s) {
    link::Connection* link = connection(conn);
    if (!link) return;
    if (s)
      link->session().respond(request_id, rpc::Outgoing());
    else
      link->session().respond_error(request_id, s.error().message);
  };
  if (*from != spec.head_node)  // a later generation, to this head: it tells every node
    return entry->launch->family_grew(std::move(notice->child),
                                      [respond](Result<std::string> child) {
                                        respond(child ? Status{} : Status(child.error()));
                                      });
  entry->launch->family_spawned(notice->child, respond);
}

LaunchNames* Agent::names_of(const std::string& launch_id) {
  LaunchEntry* entry = find_launch(launch_id);
  return entry ? &entry->launch->names() : nullptr;
}

LaunchConnects* Agent::connects_of(const std::string& launch_id) {
  LaunchEntry* entry = find_launch(launch_id);
  return entry ? &entry->launch->connects() : nullptr;
}

void Agent::family_grew(const std::string& family_id, wire::SpawnedLaunch child,
                        std::function<void(Result<std::string>)> answer) {
  LaunchEntry* entry = find_launch(family_id);
  if (!entry) return answer(parent_ended(family_id));
  entry->launch->family_grew(std::move(child), std::move(answer));
}

void Agent::pmix_event(const Sender& sender, uint64_t request_id,
                       schema::PmixEvent::Reader reader) {
  // A call (a rank's end) is answered once this node's ranks have the event, or why not.
  auto answer = [this, conn = sender.conn, request_id](Status done) {
    link::Connection* link = request_id ? connection(conn) : nullptr;
    if (!link) return;
    if (done)
      link->session().respond(request_id, rpc::Outgoing());
    else
      link->session().respond_error(request_id, done.error().message);
  };
  auto message = decode_pmix_event(reader);
  if (!message) {
    LAT_LOG(warn, "pmix", message.error().message, " (from ", secure::describe(sender.identity),
            "): dropped", log_fields({{"node", config_.node_id}, {"peer", sender.identity.name}}));
    return answer(message.error());
  }
  // An event for a launch that ended here has nobody left to hear it.
  LaunchEntry* entry = find_launch(message->launch_id);
  if (!entry) return answer(make_error(cat("no launch '", message->launch_id, "' here")));
  auto from = member_node(entry->launch->spec(), sender, "a PMIx event");
  if (!from) {
    LAT_LOG(warn, "auth", from.error().message,
            log_fields({{"launch", message->launch_id},
                        {"node", config_.node_id},
                        {"peer", sender.identity.name}}));
    return answer(from.error());
  }
  entry->launch->pmix_event(
      *from, message->notice, [answer, id = message->launch_id](Status delivered) {
        if (!delivered)
          LAT_LOG(warn, "pmix", id, ": ", delivered.error().message, log_fields({{"launch", id}}));
        answer(std::move(delivered));
      });
}

void Agent::pmix_control(const Sender& sender, uint64_t request_id,
                         schema::PmixControl::Reader reader) {
  rpc::Session& session = *session_of(sender.conn);
  auto message = decode_pmix_control(reader);
  if (!message) return session.respond_error(request_id, message.error().message);
  LaunchEntry* entry = find_launch(message->launch_id);
  if (!entry)
    return session.respond_error(request_id, cat("no launch '", message->launch_id, "' on ",
                                                 config_.node_id, " (ended here?)"));
  auto from = member_node(entry->launch->spec(), sender, "a PMIx job control");
  if (!from) {
    LAT_LOG(warn, "auth", from.error().message,
            log_fields({{"launch", message->launch_id},
                        {"node", config_.node_id},
                        {"peer", sender.identity.name}}));
    return session.respond_error(request_id, from.error().message);
  }
  if (auto done = entry->launch->pmix_control(*from, std::move(*message)); !done)
    return session.respond_error(request_id, done.error().message);
  session.respond(request_id, rpc::Outgoing());
}

void Agent::exec_message(const std::string& launch_id, const std::string& what,
                         const Sender& sender, const std::function<void(Launch&, int)>& deliver) {
  LaunchEntry* entry = find_launch(launch_id);
  if (!entry) {
    LAT_LOG(debug, "exec", what, " for unknown launch ", launch_id, " dropped");
    return;
  }
  auto from = member_node(entry->launch->spec(), sender, what);
  if (!from) {
    LAT_LOG(
        warn, "auth", from.error().message,
        log_fields(
            {{"launch", launch_id}, {"node", config_.node_id}, {"peer", sender.identity.name}}));
    return;
  }
  deliver(*entry->launch, *from);
}

std::optional<Peer> Agent::ended_member(const std::string& launch_id, const Sender& sender) const {
  auto it = ended_peers_.find(launch_id);
  if (it == ended_peers_.end() || sender.identity.role != secure::Role::agent) return std::nullopt;
  int node = it->second.find(sender.identity.name);
  return node < 0 ? std::nullopt : std::optional<Peer>(it->second[static_cast<size_t>(node)]);
}

std::string Agent::ended_here(const std::string& launch_id) const {
  return cat("launch ", launch_id, " has ended on ", config_.node_id,
             " (its ranks there have all exited)");
}

void Agent::refuse_late_exec(const lattice::wire::ExecCommand& command, const Sender& sender) {
  // Only a node of that launch hears about it, over the link to the node its handshake proved.
  auto asker = ended_member(command.launch_id, sender);
  if (!asker) {
    LAT_LOG(debug, "exec", "an escape-hatch command for unknown launch ", command.launch_id,
            " dropped");
    return;
  }
  lattice::wire::ExecEvent refusal;
  refusal.launch_id = command.launch_id;
  refusal.exec_id = command.exec_id;
  refusal.exited = true;
  refusal.error = ended_here(command.launch_id);
  peers_.send(*asker, lattice::wire::exec_event(refusal));
}

void Agent::hold_early(const std::string& launch_id, EarlyMessage early) {
  std::string from = secure::describe(early.sender.identity);
  std::string peer = early.sender.identity.name;
  arm_sweeper();
  if (!early_.hold(launch_id, std::move(early), loop_.now_ms()))
    LAT_LOG(warn, "link", "a message for unknown launch ", launch_id, " from ", from,
            " dropped: ", early_.bytes(), " bytes are held already for launches not started here",
            log_fields({{"launch", launch_id}, {"node", config_.node_id}, {"peer", peer}}));
}

void Agent::deliver_fence(LaunchEntry& entry, wire::FenceMessage message, const Sender& sender) {
  const LaunchSpec& spec = entry.launch->spec();
  if (auto allowed = may_send_fence(spec, spec.fence_tree(), message.down, message.from, sender);
      !allowed) {
    LAT_LOG(warn, "auth", allowed.error().message,
            log_fields({{"launch", entry.launch->spec().launch_id},
                        {"node", config_.node_id},
                        {"peer", sender.identity.name}}));
    return;
  }
  entry.launch->fence_message(std::move(message));
}

}  // namespace lattice::agent
