// The launch's side of wire-up: the directory its doors live in, what the ranks' progress means
// to it, the fence deadline, and the other nodes' questions about its names and ranks.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "agent/launch.hpp"
#include "agent/launch_times.hpp"
#include "agent/socket_dir.hpp"
#include "base/all_done.hpp"

namespace lattice::agent {

Status Launch::open_doors() {
  const JobUser& user = spec_.user;
  auto dir = env_.socket_dir->make_launch_dir(user.uid, user.gid, env_.agent_is_root);
  if (!dir) return dir.error();
  launch_dir_ = std::make_unique<LaunchDir>(std::move(dir.value()));
  if (auto hatch = hatch_.open(*launch_dir_, env_.mpi_launcher, allocation_.hatch_hosts); !hatch)
    return hatch;
  if (auto wired = wire_up_->open(*launch_dir_); !wired) return wired;
  if (allocation_.srun && !env_.srun_front.empty()) {
    // <launch dir>/bin/srun -> lattice-srun, made while the directory is the agent's.
    const std::string bin = launch_dir_->entry("bin");
    if (::mkdir(bin.c_str(), 0755) != 0 ||
        ::symlink(env_.srun_front.c_str(), (bin + "/srun").c_str()) != 0)
      return make_error(cat("cannot offer srun in ", bin, ": ", std::strerror(errno)));
    srun_dir_ = bin;
  }
  // Last: until now the directory was the agent's, so no name in it could be swapped.
  return launch_dir_->hand_over();
}

void Launch::rank_initialized(int) {
  if (times_.first_init_us == 0) {
    times_.first_init_us = elapsed_us();
    hold_neighbour_links();
  }
}

void Launch::rank_finalized(int) {
  if (wire_up_->all_finalized()) times_.last_finalize_us = elapsed_us();
}

void Launch::check_fence_deadline() {
  if (policy_.failure()) return;
  auto epoch = fence_.overdue(now_ms());
  if (!epoch) return;
  auto actions = policy_.fence_timed_out(*epoch, spec_.fence_timeout_ms);
  // The ranks parked in it, and the children's, hear the same words as the launcher.
  fence_.fail(*epoch, policy::describe(*policy_.failure()));
  run(std::move(actions));
}

void Launch::fence_message(wire::FenceMessage message) { fence_.receive(std::move(message)); }

namespace {
// The launcher starts a spawn's children as a launch of their own: its links, every node's
// answer (each within the launcher's agent deadline), and the way back.
constexpr uint64_t kSpawnAnswerMs = 60000;
}  // namespace

// The launcher hears spawns from the head only: one node speaks for the launch, and in a
// relayed launch only the head has a link to it.
void Launch::spawn_requested(wire::SpawnRequest request,
                             std::function<void(Result<std::string>)> answer) {
  if (spec_.head_node == spec_.node_index)
    return spawn_asked(std::move(request), std::move(answer));
  peers_.call(
      spec_.peers[static_cast<size_t>(spec_.head_node)], wire::spawn_request(request),
      kSpawnAnswerMs, [answer = std::move(answer)](auto reply) {
        auto child = wire::decode_spawn_answer(reply);
        answer(child ? Result<std::string>(child->launch_id) : Result<std::string>(child.error()));
      });
}

void Launch::spawn_asked(wire::SpawnRequest request,
                         std::function<void(Result<std::string>)> answer) {
  if (failing() || ended()) return answer(make_error("the launch is ending"));
  LAT_LOG(info, "launch", spec_.launch_id, ": rank ", request.rank, " spawns ", request.apps.size(),
          " program(s)", log_fields({{"launch", spec_.launch_id}, {"rank", cat(request.rank)}}));
  sink_.ask_launcher(*this, wire::spawn_request(request), kSpawnAnswerMs,
                     [this, alive = std::weak_ptr<int>(alive_), answer](auto reply) {
                       auto child = wire::decode_spawn_answer(reply);
                       if (!child) return answer(child.error());
                       if (alive.expired()) return answer(make_error("the launch has ended"));
                       if (!spec_.spawned_by) return tell_family(std::move(child.value()), answer);
                       // A later generation: the family's first launch runs here too.
                       if (!env_.parents) return answer(make_error("no family launch here"));
                       env_.parents->family_grew(spec_.spawned_by->family_id(),
                                                 std::move(child.value()), answer);
                     });
}

void Launch::family_grew(wire::SpawnedLaunch child,
                         std::function<void(Result<std::string>)> answer) {
  if (spec_.head_node == spec_.node_index) return tell_family(std::move(child), std::move(answer));
  const wire::FamilyNotice notice{spec_.launch_id, child};
  peers_.call(spec_.peers[static_cast<size_t>(spec_.head_node)], wire::family_notice(notice),
              kSpawnAnswerMs, [id = child.launch_id, answer = std::move(answer)](auto reply) {
                if (!reply) return answer(reply.error());
                answer(id);
              });
}

void Launch::tell_family(wire::SpawnedLaunch child,
                         std::function<void(Result<std::string>)> answer) {
  auto count =
      all_done(static_cast<size_t>(spec_.nnodes()),
               [id = child.launch_id, answer = std::move(answer)](Status s) {
                 if (!s)
                   return answer(make_error(cat("spawned launch ", id, ": ", s.error().message)));
                 answer(id);
               });
  const wire::FamilyNotice notice{spec_.launch_id, child};
  for (int node = 0; node < spec_.nnodes(); ++node) {
    if (node == spec_.node_index) continue;
    peers_.call(spec_.peers[static_cast<size_t>(node)], wire::family_notice(notice), kSpawnAnswerMs,
                [count](auto reply) { count(reply ? Status{} : Status(reply.error())); });
  }
  family_spawned(child, count);
}

void Launch::family_spawned(const wire::SpawnedLaunch& child, std::function<void(Status)> done) {
  if (auto added = family_.add(child.launch_id, child.rank_nodes); !added) return done(added);
  const std::vector<int>& layout = *family_.layout_of(namespace_of(child.launch_id));
  // Where the children run beside the parent, their own launch has told libpmix of them here.
  bool here = std::find(layout.begin(), layout.end(), spec_.node_index) != layout.end();
  wire_up_->child_spawned(child.launch_id, layout, here, std::move(done));
}

void Launch::name_asked(int from, const wire::NameRequest& request,
                        std::function<void(const Result<std::string>&)> answer) {
  names_.asked(from, request, std::move(answer));
}

void Launch::collective_asked(int from, wire::CollectiveRequest request,
                              std::function<void(Result<wire::CollectiveAnswer>)> answer) {
  connects_.asked(from, std::move(request), std::move(answer));
}

void Launch::modex_asked(int from, int rank, std::function<void(Result<std::string>)> answer) {
  wire_up_->modex_asked(from, rank, std::move(answer));
}

}  // namespace lattice::agent
