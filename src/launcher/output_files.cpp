#include "launcher/output_files.hpp"

#include <cerrno>
#include <cstring>

#include "base/strings.hpp"
#include "launcher/user_files.hpp"

namespace lattice::launcher {

Result<std::string> expand_output_pattern(const std::string& pattern, int rank, int node,
                                          const std::string& launch_id) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (++i == pattern.size()) return make_error(cat("'", pattern, "' ends with a lone %"));
    switch (pattern[i]) {
      case 't':
        out += std::to_string(rank);
        break;
      case 'n':
        out += std::to_string(node);
        break;
      case 'j':
        out += launch_id;
        break;
      case '%':
        out += '%';
        break;
      default:
        return make_error(cat("'", pattern, "': %", pattern[i],
                              " is not one of %t (rank), %n (node), %j (launch id), %%"));
    }
  }
  return out;
}

OutputFiles::OutputFiles(std::string out_pattern, std::string err_pattern, bool append,
                         std::string launch_id, std::vector<int> rank_nodes, JobUserInfo user,
                         OutputWriter& out, OutputWriter& err)
    : out_pattern_(std::move(out_pattern)),
      err_pattern_(std::move(err_pattern)),
      append_(append),
      launch_id_(std::move(launch_id)),
      rank_nodes_(std::move(rank_nodes)),
      user_(std::move(user)),
      out_(out),
      err_(err) {
  if (err_pattern_.empty()) err_pattern_ = out_pattern_;
}

OutputFiles::~OutputFiles() {
  for (auto& [path, file] : files_) std::fclose(file);
}

FILE* OutputFiles::file_for(int rank, bool is_stderr) {
  const std::string& pattern = is_stderr ? err_pattern_ : out_pattern_;
  if (pattern.empty()) return nullptr;
  int node = rank >= 0 && static_cast<size_t>(rank) < rank_nodes_.size()
                 ? rank_nodes_[static_cast<size_t>(rank)]
                 : -1;
  auto path = expand_output_pattern(pattern, rank, node, launch_id_);
  if (!path) return nullptr;  // checked when the options were parsed
  if (auto it = files_.find(*path); it != files_.end()) return it->second;
  if (failed_.count(*path)) return nullptr;
  // Truncated at the start of the launch unless --open-mode=append, as srun's.
  auto fd = open_output_file(*path, user_, append_);
  FILE* file = fd ? ::fdopen(fd->get(), "w") : nullptr;
  if (!file) {
    failed_[*path] = true;
    err_.write(cat("lattice: ",
                   fd ? cat("cannot open output file ", *path, ": ", std::strerror(errno))
                      : fd.error().message,
                   " (writing to the terminal)\n"));
    return nullptr;
  }
  fd->release();  // the FILE owns it now
  files_[*path] = file;
  return file;
}

void OutputFiles::write(int rank, bool is_stderr, const std::string& data) {
  FILE* file = file_for(rank, is_stderr);
  if (!file) return (is_stderr ? err_ : out_).write(data);
  std::fwrite(data.data(), 1, data.size(), file);
  std::fflush(file);
}

}  // namespace lattice::launcher
