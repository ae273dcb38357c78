/* PMI_process_mapping decoding for the test programs: "(vector,(first,count,ppn),...)" into the
 * node of every rank, the way MPICH reads it (blocks assign consecutive ranks and wrap around when
 * they run out). Strict: anything malformed is reported instead of guessed. */
#ifndef LATTICE_TEST_PMI2_MAPPING_H
#define LATTICE_TEST_PMI2_MAPPING_H

/* Fills node_of[0..size-1] from text; returns NULL on success or a static error message. */
const char* mapping_decode(const char* text, int size, int* node_of);

#endif
