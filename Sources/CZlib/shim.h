#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
// zlib from the system (Debian: zlib1g-dev). Linux Foundation has no compression API.
#include <zlib.h>

// inflateInit2 is a macro (it passes the header's version and the stream's size), which Swift
// cannot call. window_bits as zlib reads it: 15 for a zlib stream, 31 for gzip,
// -15 for raw deflate.
static inline int cachelog_inflate_init2(z_streamp stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}
#endif
