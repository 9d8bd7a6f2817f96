#ifndef CCURL_H
#define CCURL_H
// libcurl's easy interface, loaded with dlopen on first use rather than linked: a program that
// links libcurl maps it and its ~30 dependencies (TLS, Kerberos, LDAP, SSH, HTTP/2…) at every
// start, also when it never goes to the network.
//
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: each has one
// wrapper per argument type here. The option, info and error numbers are libcurl's ABI (fixed
// since they were added, see curl/curl.h), declared here so that building needs no curl headers.

#include <stddef.h>
#include <stdint.h>

/// The functions of one loaded libcurl.
typedef struct ccurl_library ccurl_library;

/// Called with each chunk of the body (or each header line): returns size * count to go on, any
/// other number to abort the transfer.
typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t count, void *context);
/// Called often during a transfer (at least about once a second): returns 0 to go on, any other
/// number to abort it.
typedef int (*ccurl_progress_callback)(void *context, int64_t download_total, int64_t download_now,
                                       int64_t upload_total, int64_t upload_now);

enum {
    CCURL_ERROR_SIZE = 256,

    // CURLoption: the type's base plus the number (long 0, pointer 10000, function 20000, off_t 30000,
    // blob 40000).
    CCURLOPT_WRITEDATA = 10001,
    CCURLOPT_URL = 10002,
    CCURLOPT_PROXY = 10004,
    CCURLOPT_ERRORBUFFER = 10010,
    CCURLOPT_WRITEFUNCTION = 20011,
    CCURLOPT_USERAGENT = 10018,
    CCURLOPT_HTTPHEADER = 10023,
    CCURLOPT_HEADERDATA = 10029,
    CCURLOPT_NOPROGRESS = 43,
    CCURLOPT_FOLLOWLOCATION = 52,
    CCURLOPT_XFERINFODATA = 10057,
    CCURLOPT_CAINFO = 10065,
    CCURLOPT_MAXREDIRS = 68,
    CCURLOPT_HEADERFUNCTION = 20079,
    CCURLOPT_HTTPGET = 80,
    CCURLOPT_CAPATH = 10097,
    CCURLOPT_NOSIGNAL = 99,
    CCURLOPT_ACCEPT_ENCODING = 10102,
    CCURLOPT_MAXFILESIZE_LARGE = 30117,
    CCURLOPT_TIMEOUT_MS = 155,
    CCURLOPT_HTTP_CONTENT_DECODING = 158,
    CCURLOPT_NOPROXY = 10177,
    CCURLOPT_PROTOCOLS = 181,
    CCURLOPT_REDIR_PROTOCOLS = 182,
    CCURLOPT_XFERINFOFUNCTION = 20219,
    // A struct curl_blob * (CURLOPTTYPE_BLOB, 40000): set through ccurl_setopt_blob.
    CCURLOPT_CAINFO_BLOB = 40309,

    CCURLPROTO_HTTP = 1,
    CCURLPROTO_HTTPS = 2,

    // CURLINFO: the type's base plus the number (string 0x100000, long 0x200000).
    CCURLINFO_EFFECTIVE_URL = 0x100001,
    CCURLINFO_REDIRECT_URL = 0x10001F,
    CCURLINFO_RESPONSE_CODE = 0x200002,

    // CURLcode
    CCURLE_OK = 0,
    CCURLE_UNSUPPORTED_PROTOCOL = 1,
    CCURLE_URL_MALFORMAT = 3,
    CCURLE_COULDNT_RESOLVE_PROXY = 5,
    CCURLE_COULDNT_RESOLVE_HOST = 6,
    CCURLE_COULDNT_CONNECT = 7,
    CCURLE_WEIRD_SERVER_REPLY = 8,
    CCURLE_HTTP2 = 16,
    CCURLE_PARTIAL_FILE = 18,
    CCURLE_WRITE_ERROR = 23,
    CCURLE_OPERATION_TIMEDOUT = 28,
    CCURLE_SSL_CONNECT_ERROR = 35,
    CCURLE_TOO_MANY_REDIRECTS = 47,
    CCURLE_GOT_NOTHING = 52,
    CCURLE_SEND_ERROR = 55,
    CCURLE_RECV_ERROR = 56,
    CCURLE_SSL_CERTPROBLEM = 58,
    CCURLE_SSL_CIPHER = 59,
    CCURLE_PEER_FAILED_VERIFICATION = 60,
    CCURLE_BAD_CONTENT_ENCODING = 61,
    CCURLE_FILESIZE_EXCEEDED = 63,
    CCURLE_SSL_CACERT_BADFILE = 77,
    CCURLE_SSL_CRL_BADFILE = 82,
    CCURLE_SSL_ISSUER_ERROR = 83,
    CCURLE_HTTP2_STREAM = 92,
    CCURLE_PROXY = 97,
    CCURLE_SSL_CLIENTCERT = 98,
};

/// Loads libcurl from the first of `names` that opens and initialises it (once per process and
/// name; later calls return the same library). NULL when none opens or libcurl fails to
/// initialise: `error` (of `error_size` bytes) then says why.
const ccurl_library *ccurl_load(const char *const *names, size_t count, char *error, size_t error_size);

void *ccurl_easy_init(const ccurl_library *library);
void ccurl_easy_cleanup(const ccurl_library *library, void *handle);
long ccurl_easy_perform(const ccurl_library *library, void *handle);
const char *ccurl_easy_strerror(const ccurl_library *library, long code);

long ccurl_setopt_long(const ccurl_library *library, void *handle, long option, long value);
long ccurl_setopt_int64(const ccurl_library *library, void *handle, long option, int64_t value);
long ccurl_setopt_string(const ccurl_library *library, void *handle, long option, const char *value);
long ccurl_setopt_pointer(const ccurl_library *library, void *handle, long option, const void *value);
/// Sets a blob option (CCURLOPT_CAINFO_BLOB) to `length` bytes at `data`, which libcurl copies.
long ccurl_setopt_blob(const ccurl_library *library, void *handle, long option, const void *data, size_t length);
long ccurl_setopt_data_callback(const ccurl_library *library, void *handle, long option, ccurl_data_callback callback);
long ccurl_setopt_progress_callback(const ccurl_library *library, void *handle, long option, ccurl_progress_callback callback);

long ccurl_getinfo_long(const ccurl_library *library, void *handle, long info, long *value);
long ccurl_getinfo_string(const ccurl_library *library, void *handle, long info, const char **value);

/// A header list for CCURLOPT_HTTPHEADER: `list` (NULL for a new one) with `line` appended, or
/// NULL when out of memory (`list` is then unchanged).
void *ccurl_slist_append(const ccurl_library *library, void *list, const char *line);
void ccurl_slist_free_all(const ccurl_library *library, void *list);

#endif
