#include "launcher/cluster_status.hpp"

#include "base/strings.hpp"
#include "launcher/agent_links.hpp"
#include "net/timer.hpp"

namespace lattice::launcher {

std::vector<admin::AgentAnswer> ask_status(net::Loop& loop, const secure::Credentials& credentials,
                                           const std::vector<AgentAddress>& agents, bool json,
                                           const std::string& launch_id) {
  std::vector<admin::AgentAnswer> answers;
  for (const auto& a : agents) answers.push_back({a.node_id, cat(a.host, ':', a.port), "", ""});
  std::vector<bool> done(agents.size(), false);
  size_t left = agents.size();
  std::unique_ptr<AgentLinks> links;
  auto finish = [&](int node, std::string status, std::string error) {
    auto i = static_cast<size_t>(node);
    if (done[i]) return;
    done[i] = true;
    answers[i].status = std::move(status);
    answers[i].error = std::move(error);
    links->close(node);
    if (--left == 0) loop.stop();
  };
  AgentLinks::Handlers h;
  h.wanted = [&](int node) { return !done[static_cast<size_t>(node)]; };
  h.carrying = [](int) { return false; };
  h.authenticated = [&](int node) {
    answers[static_cast<size_t>(node)].agent = links->address(node).node_id;
    rpc::Outgoing request;
    auto body = request.body().initAgentStatus();
    body.setJson(json);
    body.setLaunchId(launch_id);
    links->call(node, std::move(request), loop.now_ms() + kStatusAnswerMs,
                [&, node](Result<schema::Envelope::Reader> reply) {
                  if (!reply) return finish(node, "", reply.error().message);
                  if (reply->getBody().which() != schema::Envelope::Body::AGENT_STATUS)
                    return finish(node, "", "it answered with another message");
                  auto text = reply->getBody().getAgentStatus().getText();
                  finish(node, std::string(text.cStr(), text.size()), "");
                });
  };
  h.message = [](int, schema::Envelope::Reader) {};
  h.out = [&](int node, JobFailure failure) { finish(node, "", policy::describe(failure)); };
  h.lost = [&](int node, JobFailure failure) { finish(node, "", policy::describe(failure)); };
  links = std::make_unique<AgentLinks>(loop, AgentReach{&credentials, ""}, agents, std::move(h));
  std::vector<int> all;
  for (size_t i = 0; i < agents.size(); ++i) all.push_back(static_cast<int>(i));
  net::Timer deadline(loop);
  deadline.start(kStatusAnswerMs, 0, [&] {
    for (size_t i = 0; i < agents.size(); ++i)
      finish(static_cast<int>(i), "", cat("no answer within ", kStatusAnswerMs / 1000, " s"));
  });
  if (left) {
    links->link_to(all);
    loop.run();
  }
  links->close_all();
  return answers;
}

}  // namespace lattice::launcher
