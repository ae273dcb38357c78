// The PMI command table: (wire, name) -> handler, whether it needs an initialized rank, and the
// PMI-1 answer's cmd name (clients check it). Anything absent gets an rc != 0 answer.
#include "pmi/server.hpp"

namespace lattice::pmi {

const std::vector<Server::CommandSpec>& Server::command_table() {
  constexpr Wire v1 = Wire::pmi1;
  constexpr Wire v2 = Wire::pmi2;
  static const std::vector<CommandSpec> table = {
      // PMI-1 (MPICH 4.0.2 simple PMI)
      {v1, "init", "response_to_init", false, &Server::on_init},
      {v1, "initack", "initack", false, &Server::on_initack},
      {v1, "get_maxes", "maxes", true, &Server::on_get_maxes},
      {v1, "get_appnum", "appnum", true, &Server::on_get_appnum},
      {v1, "get_my_kvsname", "my_kvsname", true, &Server::on_get_my_kvsname},
      {v1, "get_universe_size", "universe_size", true, &Server::on_get_universe_size},
      {v1, "put", "put_result", true, &Server::on_put},
      {v1, "get", "get_result", true, &Server::on_get},
      {v1, "barrier_in", "barrier_out", true, &Server::on_barrier_in},
      {v1, "finalize", "finalize_ack", true, &Server::on_finalize},
      {v1, "abort", "", false, &Server::on_abort},
      {v1, "spawn", "spawn_result", false, &Server::on_spawn_pmi1},  // mcmd=spawn ... endcmd
      {v1, "publish_name", "publish_result", true, &Server::on_name},
      {v1, "unpublish_name", "unpublish_result", true, &Server::on_name},
      {v1, "lookup_name", "lookup_result", true, &Server::on_name},
      {v1, "create_kvs", "newkvs", false, &Server::on_unsupported},
      {v1, "destroy_kvs", "kvs_destroyed", false, &Server::on_unsupported},
      {v1, "getbyidx", "getbyidx_results", false, &Server::on_unsupported},
      // PMI-2 (Slurm 22.05 libpmi2, MPICH pmi2/simple); answers are "<name>-response"
      {v2, "fullinit", "", false, &Server::on_fullinit},
      {v2, "job-getid", "", true, &Server::on_job_getid},
      {v2, "info-getjobattr", "", true, &Server::on_getjobattr},
      {v2, "info-putnodeattr", "", true, &Server::on_putnodeattr},
      {v2, "info-getnodeattr", "", true, &Server::on_getnodeattr},
      {v2, "kvs-put", "", true, &Server::on_kvs_put},
      {v2, "kvs-fence", "", true, &Server::on_kvs_fence},
      {v2, "kvs-get", "", true, &Server::on_kvs_get},
      {v2, "finalize", "", true, &Server::on_finalize},
      {v2, "abort", "", false, &Server::on_abort},
      {v2, "ring", "", true, &Server::on_ring},
      {v2, "spawn", "", false, &Server::on_unsupported},
      {v2, "job-connect", "", false, &Server::on_unsupported},
      {v2, "job-disconnect", "", false, &Server::on_unsupported},
      {v2, "name-publish", "", true, &Server::on_name},
      {v2, "name-unpublish", "", true, &Server::on_name},
      {v2, "name-lookup", "", true, &Server::on_name},
  };
  return table;
}

}  // namespace lattice::pmi
