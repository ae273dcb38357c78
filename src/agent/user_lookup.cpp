#include "agent/user_lookup.hpp"

#include <csignal>

#include "base/strings.hpp"
#include "proc/exit_status.hpp"
#include "proc/user_description.hpp"

namespace lattice::agent {
namespace {

constexpr size_t kMaxErrorBytes = 4096;  // the helper's complaint: one line, kept short

}  // namespace

std::string group_list(const std::vector<uint32_t>& groups) {
  std::string list;
  for (uint32_t g : groups) list += (list.empty() ? "" : ",") + std::to_string(g);
  return list;
}

Result<std::unique_ptr<UserLookup>> UserLookup::start(net::Loop& loop, const std::string& rank_exec,
                                                      const JobUser& user, Done done,
                                                      uint64_t timeout_ms) {
  std::unique_ptr<UserLookup> self(new UserLookup(loop, user, std::move(done)));
  net::SpawnSpec spec;
  spec.file = rank_exec;
  spec.argv = {rank_exec, "--describe", "--user", cat(user.uid, ':', user.gid, ':', user.name)};
  if (user.groups) spec.argv.insert(spec.argv.end(), {"--groups", group_list(*user.groups)});
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.parent_death_signal = SIGKILL;
  UserLookup* raw = self.get();
  auto helper = net::Process::spawn(loop, spec, [raw](net::ExitInfo info) {
    raw->exited_ = true;
    raw->exit_ = info;
    raw->finish_if_done();
  });
  if (!helper) return helper.error();
  self->helper_ = std::move(helper.value());
  self->collect(self->helper_->take_stdout(), self->out_, proc::kMaxUserDescriptionBytes,
                self->out_stream_);
  self->collect(self->helper_->take_stderr(), self->err_, kMaxErrorBytes, self->err_stream_);
  self->deadline_.start(timeout_ms, 0, [raw, timeout_ms] {
    if (raw->exited_) return;  // only its outputs are still closing
    raw->timed_out_ms_ = timeout_ms;
    raw->helper_->kill_group(SIGKILL);
  });
  return self;
}

UserLookup::~UserLookup() {
  if (helper_ && !exited_) helper_->kill_group(SIGKILL);
}

// Reads up to `limit` bytes; more than that is the helper misbehaving: it is killed, and the
// lookup fails once it has exited.
void UserLookup::collect(std::unique_ptr<net::Stream> stream, std::string& into, size_t limit,
                         std::unique_ptr<net::Stream>& slot) {
  if (!stream) return;
  ++open_streams_;
  stream->start(
      [this, &into, limit](std::string_view bytes) {
        if (overflowed_) return;
        if (into.size() + bytes.size() > limit) {
          overflowed_ = true;
          helper_->kill_group(SIGKILL);
          return;
        }
        into.append(bytes);
      },
      [this](const Error&) {
        --open_streams_;
        finish_if_done();
      });
  slot = std::move(stream);
}

void UserLookup::finish_if_done() {
  if (!exited_ || open_streams_ > 0 || !done_) return;
  Done done = std::move(done_);
  done_ = nullptr;
  deadline_.stop();
  Result<proc::ProcessUser> user = make_error("");
  if (timed_out_ms_) {
    user = make_error(cat("looking up user ", user_.name, " (uid ", user_.uid,
                          ") on this node took over ", *timed_out_ms_ / 1000.0, " s"));
  } else if (overflowed_) {
    user = make_error("lattice-rank-exec --describe wrote more than it may");
  } else if (exit_.exit_status != 0 || exit_.term_signal != 0) {
    std::string_view rest = err_;  // its first line that says something
    while (!rest.empty() && rest.front() == '\n') rest.remove_prefix(1);
    std::string why(rest.substr(0, rest.find('\n')));
    if (why.empty())
      why = cat(
          "lattice-rank-exec --describe ",
          proc::describe(proc::ExitStatus{static_cast<int>(exit_.exit_status), exit_.term_signal}));
    user = make_error(std::move(why));
  } else {
    user = proc::parse_user_description(out_, user_.uid, user_.gid, user_.name);
  }
  done(std::move(user));  // last: it may destroy this object
}

}  // namespace lattice::agent
