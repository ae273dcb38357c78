// This build's schema against the previous release's (schema/releases/): every change is one a
// peer of that release can live with (Cap'n Proto's compatibility check, and nothing it knew is
// gone), and messages written by either side read correctly on the other. docs/protocol.md,
// Versions, gives the rules.
#include <capnp/dynamic.h>
#include <capnp/message.h>
#include <capnp/schema-loader.h>
#include <capnp/schema-parser.h>
#include <capnp/serialize.h>
#include <doctest/doctest.h>
#include <kj/filesystem.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "lattice.capnp.h"
#include "rpc/version.hpp"
#include "wire/launch_request.hpp"

using namespace lattice;

namespace {

std::string read_text(const char* path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read ", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A schema file's text parsed as Cap'n Proto's compiler would, imports from capnp's own dir.
class ParsedFile {
 public:
  explicit ParsedFile(const std::string& text) {
    auto path = kj::Path::parse("lattice.capnp");
    dir_->openFile(path, kj::WriteMode::CREATE)->writeAll(text.c_str());
    includes_ = fs_->getRoot().openSubdir(kj::Path(nullptr).evalNative(LATTICE_CAPNP_INCLUDE_DIR));
    const kj::ReadableDirectory* imports[] = {includes_.get()};
    file_ = parser_.parseFromDirectory(*dir_, kj::mv(path), imports);
  }
  capnp::StructSchema envelope() const { return file_.getNested("Envelope").asStruct(); }
  capnp::StructSchema type(const char* name) const { return file_.getNested(name).asStruct(); }

 private:
  kj::Own<kj::Filesystem> fs_ = kj::newDiskFilesystem();
  kj::Own<kj::Directory> dir_ = kj::newInMemoryDirectory(kj::nullClock());
  kj::Own<const kj::ReadableDirectory> includes_;
  capnp::SchemaParser parser_;
  capnp::ParsedSchema file_;
};

const ParsedFile& release() {
  static const ParsedFile parsed(read_text(LATTICE_RELEASE_SCHEMA));
  return parsed;
}

// Every struct (groups included) and enum a message starting at `root` can hold, by node id.
void reach(capnp::Schema schema, std::map<uint64_t, capnp::Schema>& out) {
  if (!out.emplace(schema.getProto().getId(), schema).second) return;
  if (!schema.getProto().isStruct()) return;
  for (auto field : schema.asStruct().getFields()) {
    auto type = field.getType();
    while (type.isList()) type = type.asList().getElementType();
    if (type.isStruct()) reach(type.asStruct(), out);
    if (type.isEnum()) reach(type.asEnum(), out);
  }
}

std::string name_of(capnp::Schema schema) {
  auto name = schema.getProto().getDisplayName();
  return std::string(name.begin() + schema.getProto().getDisplayNamePrefixLength(), name.end());
}

// What `newer` changes that a peer holding `older` cannot live with.
std::vector<std::string> breaking_changes(capnp::StructSchema older, capnp::StructSchema newer) {
  std::map<uint64_t, capnp::Schema> old_nodes, new_nodes;
  reach(older, old_nodes);
  reach(newer, new_nodes);
  std::vector<std::string> out;
  // Types, offsets, sizes and union layout: the loader refuses a node that cannot replace or be
  // replaced by the one of the same id it holds.
  capnp::SchemaLoader loader;
  for (auto& [id, schema] : old_nodes) loader.load(schema.getProto());
  for (auto& node : new_nodes) {
    capnp::Schema schema = node.second;  // a copy: clang lets no lambda capture a binding
    KJ_IF_MAYBE (e, kj::runCatchingExceptions([&] { loader.load(schema.getProto()); })) {
      out.push_back(name_of(schema) + ": " + e->getDescription().cStr());
    }
  }
  // ... and what it would take for a newer version: nothing the older one knew may go.
  for (auto& [id, schema] : old_nodes) {
    auto found = new_nodes.find(id);
    if (found == new_nodes.end()) {
      out.push_back(name_of(schema) + " is gone");
      continue;
    }
    auto now = found->second;
    if (schema.getProto().isStruct())
      for (auto field : schema.asStruct().getFields())
        if (now.asStruct().getFields().size() <= field.getIndex())
          out.push_back(name_of(schema) + "." + field.getProto().getName().cStr() + " is gone");
    if (schema.getProto().isEnum())
      for (auto value : schema.asEnum().getEnumerants())
        if (now.asEnum().getEnumerants().size() <= value.getIndex())
          out.push_back(name_of(schema) + "." + value.getProto().getName().cStr() + " is gone");
  }
  return out;
}

// The name of a union member or enumerant the reader recognised; "(none)" otherwise.
template <class T>
std::string name_or_none(kj::Maybe<T> maybe) {
  KJ_IF_MAYBE (known, maybe) {
    return known->getProto().getName().cStr();
  }
  return "(none)";
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (auto& line : lines) out += line + "\n";
  return out;
}

}  // namespace

TEST_CASE("this build's schema is a compatible successor of the previous release's") {
  auto changes = breaking_changes(release().envelope(), capnp::Schema::from<schema::Envelope>());
  CHECK_MESSAGE(changes.empty(), joined(changes));
}

TEST_CASE("the check sees a field gone and a type changed") {
  // Backwards, this build loses the version field the release lacks.
  auto backwards = breaking_changes(capnp::Schema::from<schema::Envelope>(), release().envelope());
  CHECK(joined(backwards).find("Envelope.version is gone") != std::string::npos);
  // A release whose request id was 32 bits cannot be followed by ours.
  std::string text = read_text(LATTICE_RELEASE_SCHEMA);
  auto at = text.find("requestId @0 :UInt64;");
  REQUIRE(at != std::string::npos);
  text.replace(at, 21, "requestId @0 :UInt32;");
  ParsedFile changed(text);
  auto changes = breaking_changes(changed.envelope(), capnp::Schema::from<schema::Envelope>());
  CHECK_MESSAGE(joined(changes).find("Envelope: a type was changed") != std::string::npos,
                joined(changes));
}

TEST_CASE("a launch request written by the previous release reads in this build") {
  capnp::MallocMessageBuilder builder;
  auto envelope = builder.initRoot<capnp::DynamicStruct>(release().envelope());
  envelope.set("requestId", 7);
  auto body = envelope.get("body").as<capnp::DynamicStruct>();
  auto request = body.init("launchProcesses").as<capnp::DynamicStruct>();
  request.set("launchId", "L-old");
  request.set("entrypoint", "/bin/hostname");
  auto args = request.init("args", 2).as<capnp::DynamicList>();
  args.set(0, "-s");
  args.set(1, "x y");
  request.set("tasksPerNode", 2);
  request.set("worldSize", 4);
  request.set("pmiMode", "pmix");
  auto peers = request.init("peers", 2).as<capnp::DynamicList>();
  for (unsigned i = 0; i < 2; ++i) {
    auto peer = peers[i].as<capnp::DynamicStruct>();
    peer.set("nodeId", i == 0 ? "n1" : "n2");
    peer.set("host", "127.0.0.1");
    peer.set("port", 7400 + i);
  }
  auto rank_nodes = request.init("rankNodes", 4).as<capnp::DynamicList>();
  for (unsigned i = 0; i < 4; ++i) rank_nodes.set(i, i / 2);
  request.set("nodeIndex", 1);

  auto words = capnp::messageToFlatArray(builder);
  capnp::FlatArrayMessageReader reader(words);
  auto read = reader.getRoot<schema::Envelope>();
  CHECK(read.getVersion() == 1);  // the release stamped none: read as its version
  CHECK(rpc::adjacent_version(read.getVersion()));
  REQUIRE(read.getBody().isLaunchProcesses());
  auto decoded = wire::decode_launch_request(read.getBody().getLaunchProcesses());
  REQUIRE_MESSAGE(decoded.ok(), decoded.error().message);
  CHECK(decoded->launch_id == "L-old");
  CHECK(decoded->args == std::vector<std::string>{"-s", "x y"});
  CHECK(decoded->world_size == 4);
  CHECK(decoded->pmi == wire::PmiMode::pmix);
  REQUIRE(decoded->peers.size() == 2);
  CHECK(decoded->peers[1].node_id == "n2");
  CHECK(decoded->peers[1].port == 7401);
  CHECK(decoded->rank_nodes == std::vector<uint32_t>{0, 0, 1, 1});
}

TEST_CASE("a launch request of this build reads in the previous release") {
  wire::LaunchRequest sent;
  sent.launch_id = "L-new";
  sent.entrypoint = "/bin/true";
  sent.args = {"a"};
  sent.tasks_per_node = 1;
  sent.world_size = 2;
  sent.pmi = wire::PmiMode::pmi;
  sent.peers = {{"n1", "10.0.0.1", 7400}, {"n2", "10.0.0.2", 7401}};
  sent.rank_nodes = {0, 1};
  auto msg = wire::launch_request(sent);
  auto words = capnp::messageToFlatArray(msg.message());
  capnp::FlatArrayMessageReader reader(words);
  auto envelope = reader.getRoot<capnp::DynamicStruct>(release().envelope());
  auto body = envelope.get("body").as<capnp::DynamicStruct>();
  CHECK(name_or_none(body.which()) == "launchProcesses");
  auto request = body.get("launchProcesses").as<capnp::DynamicStruct>();
  CHECK(request.get("launchId").as<capnp::Text>() == "L-new");
  CHECK(request.get("worldSize").as<uint32_t>() == 2);
  CHECK(name_or_none(request.get("pmiMode").as<capnp::DynamicEnum>().getEnumerant()) == "pmi2");
  auto peers = request.get("peers").as<capnp::DynamicList>();
  REQUIRE(peers.size() == 2);
  CHECK(peers[1].as<capnp::DynamicStruct>().get("host").as<capnp::Text>() == "10.0.0.2");
}
