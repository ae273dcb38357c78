// --output / --error: ranks' output into files named by srun's patterns (%t rank, %n node
// index, %j launch id, %% a percent sign). Without a pattern a stream goes to the launcher's
// own stdout/stderr; with --output alone, stderr joins stdout's file, as in srun. The files are
// opened with the job's user's rights (user_files.hpp).
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "launcher/job_user.hpp"
#include "launcher/output_writer.hpp"

namespace lattice::launcher {

// The file name for one rank; an unknown %-sequence is an error naming it.
Result<std::string> expand_output_pattern(const std::string& pattern, int rank, int node,
                                          const std::string& launch_id);

class OutputFiles {
 public:
  // `out` and `err`: the launcher's own stdout and stderr; they must outlive this.
  // `append`: --open-mode=append (else each file is truncated when first written).
  OutputFiles(std::string out_pattern, std::string err_pattern, bool append, std::string launch_id,
              std::vector<int> rank_nodes, JobUserInfo user, OutputWriter& out, OutputWriter& err);
  ~OutputFiles();
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;

  // Writes a rank's output where it belongs; a file that cannot be opened is said once on
  // stderr and its output goes to the terminal instead, so nothing is lost.
  void write(int rank, bool is_stderr, const std::string& data);

 private:
  FILE* file_for(int rank, bool is_stderr);

  std::string out_pattern_, err_pattern_;
  bool append_;
  std::string launch_id_;
  std::vector<int> rank_nodes_;
  JobUserInfo user_;  // whose rights open the files
  OutputWriter& out_;
  OutputWriter& err_;
  std::map<std::string, FILE*> files_;  // by path: ranks sharing a name share the file
  std::map<std::string, bool> failed_;  // paths that could not be opened (said once)
};

}  // namespace lattice::launcher
