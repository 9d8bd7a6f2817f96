#ifndef CDEFLATE_SHIM_H
#define CDEFLATE_SHIM_H
// libdeflate from the system (Debian: libdeflate-dev): whole-buffer DEFLATE that writes and reads
// the same zlib streams (RFC 1950) as zlib, in about half zlib's time.
#include <libdeflate.h>
#endif
