#include "agent/pmix_messages.hpp"

#include <climits>

#include "base/strings.hpp"

namespace lattice::agent {

namespace {

constexpr size_t kMaxKey = 511;     // PMIX_MAX_KEYLEN
constexpr size_t kMaxNspace = 255;  // PMIX_MAX_NSLEN
constexpr size_t kMaxLaunchId = 256;

Result<std::string> text(capnp::Text::Reader t, size_t max, const char* what) {
  if (t.size() > max) return make_error(cat("a PMIx message's ", what, " is over ", max, " bytes"));
  return std::string(t.cStr(), t.size());
}

}  // namespace

rpc::Outgoing pmix_event_message(const PmixEventMessage& message) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmixEvent();
  m.setLaunchId(message.launch_id);
  m.setCode(message.notice.code);
  m.setSourceRank(message.notice.source_rank);
  m.setRange(message.notice.range);
  auto list = m.initInfo(static_cast<unsigned>(message.notice.info.size()));
  for (size_t n = 0; n < message.notice.info.size(); ++n) {
    const pmix::InfoValue& v = message.notice.info[n];
    auto out = list[static_cast<unsigned>(n)];
    out.setKey(v.key);
    out.setPmixType(v.pmix_type);
    switch (v.kind) {
      case pmix::InfoValue::Kind::flag:
        out.getValue().setFlag(v.number != 0);
        break;
      case pmix::InfoValue::Kind::integer:
        out.getValue().setInteger(v.number);
        break;
      case pmix::InfoValue::Kind::text:
        out.getValue().setText(v.text);
        break;
      case pmix::InfoValue::Kind::procs: {
        auto procs = out.getValue().initProcs(static_cast<unsigned>(v.procs.size()));
        for (size_t p = 0; p < v.procs.size(); ++p) {
          procs[static_cast<unsigned>(p)].setNspace(v.procs[p].nspace);
          procs[static_cast<unsigned>(p)].setRank(v.procs[p].rank);
        }
        break;
      }
    }
  }
  return msg;
}

Result<PmixEventMessage> decode_pmix_event(schema::PmixEvent::Reader reader) {
  PmixEventMessage out;
  auto id = text(reader.getLaunchId(), kMaxLaunchId, "launch id");
  if (!id) return id.error();
  out.launch_id = std::move(*id);
  out.notice.code = reader.getCode();
  out.notice.source_rank = reader.getSourceRank();
  out.notice.range = reader.getRange();
  auto list = reader.getInfo();
  if (list.size() > pmix::kMaxEventInfos)
    return make_error(cat("a PMIx event carries ", list.size(), " info values (at most ",
                          pmix::kMaxEventInfos, ")"));
  for (auto in : list) {
    pmix::InfoValue v;
    auto key = text(in.getKey(), kMaxKey, "info key");
    if (!key) return key.error();
    v.key = std::move(*key);
    v.pmix_type = in.getPmixType();
    auto value = in.getValue();
    switch (value.which()) {
      case schema::PmixInfo::Value::FLAG:
        v.kind = pmix::InfoValue::Kind::flag;
        v.number = value.getFlag() ? 1 : 0;
        break;
      case schema::PmixInfo::Value::INTEGER:
        v.kind = pmix::InfoValue::Kind::integer;
        v.number = value.getInteger();
        break;
      case schema::PmixInfo::Value::TEXT: {
        auto t = text(value.getText(), pmix::kMaxEventText, "info text");
        if (!t) return t.error();
        v.kind = pmix::InfoValue::Kind::text;
        v.text = std::move(*t);
        break;
      }
      case schema::PmixInfo::Value::PROCS: {
        auto procs = value.getProcs();
        if (procs.size() > pmix::kMaxEventProcs)
          return make_error(cat("a PMIx event's info names ", procs.size(), " processes (at most ",
                                pmix::kMaxEventProcs, ")"));
        v.kind = pmix::InfoValue::Kind::procs;
        for (auto p : procs) {
          auto nspace = text(p.getNspace(), kMaxNspace, "namespace");
          if (!nspace) return nspace.error();
          v.procs.push_back(pmix::ProcId{std::move(*nspace), p.getRank()});
        }
        break;
      }
      default:
        return make_error("a PMIx event's info value is of an unknown kind");
    }
    out.notice.info.push_back(std::move(v));
  }
  return out;
}

rpc::Outgoing pmix_control_message(const PmixControlMessage& message) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmixControl();
  m.setLaunchId(message.launch_id);
  switch (message.action) {
    case PmixControlMessage::Action::signal:
      m.setAction(schema::PmixControlAction::SIGNAL);
      break;
    case PmixControlMessage::Action::kill:
      m.setAction(schema::PmixControlAction::KILL);
      break;
    case PmixControlMessage::Action::terminate:
      m.setAction(schema::PmixControlAction::TERMINATE);
      break;
  }
  m.setSignal(message.signum);
  auto ranks = m.initRanks(static_cast<unsigned>(message.ranks.size()));
  for (size_t n = 0; n < message.ranks.size(); ++n)
    ranks.set(static_cast<unsigned>(n), static_cast<uint32_t>(message.ranks[n]));
  return msg;
}

Result<PmixControlMessage> decode_pmix_control(schema::PmixControl::Reader reader) {
  PmixControlMessage out;
  auto id = text(reader.getLaunchId(), kMaxLaunchId, "launch id");
  if (!id) return id.error();
  out.launch_id = std::move(*id);
  switch (reader.getAction()) {
    case schema::PmixControlAction::SIGNAL:
      out.action = PmixControlMessage::Action::signal;
      break;
    case schema::PmixControlAction::KILL:
      out.action = PmixControlMessage::Action::kill;
      break;
    case schema::PmixControlAction::TERMINATE:
      out.action = PmixControlMessage::Action::terminate;
      break;
    default:
      return make_error("a PMIx job control of an unknown kind");
  }
  out.signum = reader.getSignal();
  if (out.action == PmixControlMessage::Action::signal && (out.signum <= 0 || out.signum >= 65))
    return make_error(cat("a PMIx job control asks for signal ", out.signum));
  // Every rank is named at most once per node, and a launch has at most INT_MAX ranks: the
  // launch checks each against its own.
  for (uint32_t rank : reader.getRanks()) {
    if (rank > INT_MAX) return make_error(cat("a PMIx job control names rank ", rank));
    out.ranks.push_back(static_cast<int>(rank));
  }
  return out;
}

}  // namespace lattice::agent
