/* Decodes PMI_process_mapping (see pmi2_mapping.h). Blocks with a zero node count or zero ranks
 * per node are refused, which is also what guarantees that wrapping around ends. */
#include "pmi2_mapping.h"

#include <stdlib.h>
#include <string.h>

/* More blocks than any test layout needs; a mapping with more is reported, not truncated. */
#define MAPPING_MAX_BLOCKS 256

struct block {
  int first, count, ppn;
};

/* Parses a non-negative decimal at *p and advances past it; -1 when there is none. */
static int take_int(const char** p) {
  if (**p < '0' || **p > '9') return -1;
  char* end = NULL;
  long v = strtol(*p, &end, 10);
  if (v > 1000000) return -1;
  *p = end;
  return (int)v;
}

static int take(const char** p, const char* literal) {
  size_t n = strlen(literal);
  if (strncmp(*p, literal, n) != 0) return 0;
  *p += n;
  return 1;
}

static const char* parse_blocks(const char* text, struct block* blocks, int* nblocks) {
  const char* p = text;
  if (!take(&p, "(vector")) return "does not start with '(vector'";
  *nblocks = 0;
  while (take(&p, ",(")) {
    if (*nblocks == MAPPING_MAX_BLOCKS) return "too many blocks";
    struct block* b = &blocks[(*nblocks)++];
    b->first = take_int(&p);
    if (b->first < 0 || !take(&p, ",")) return "bad first node";
    b->count = take_int(&p);
    if (b->count < 1 || !take(&p, ",")) return "bad node count";
    b->ppn = take_int(&p);
    if (b->ppn < 1 || !take(&p, ")")) return "bad ranks per node";
  }
  if (!take(&p, ")") || *p != '\0') return "trailing text or missing ')'";
  if (*nblocks == 0) return "no blocks";
  return NULL;
}

const char* mapping_decode(const char* text, int size, int* node_of) {
  static struct block blocks[MAPPING_MAX_BLOCKS];
  int nblocks = 0;
  const char* err = parse_blocks(text, blocks, &nblocks);
  if (err) return err;
  int rank = 0;
  while (rank < size) {
    for (int b = 0; b < nblocks && rank < size; ++b)
      for (int n = 0; n < blocks[b].count && rank < size; ++n)
        for (int k = 0; k < blocks[b].ppn && rank < size; ++k)
          node_of[rank++] = blocks[b].first + n;
  }
  return NULL;
}
