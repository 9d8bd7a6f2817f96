#include "CCurl.h"

#include <dlfcn.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The prototypes of the libcurl functions used, as curl/curl.h declares them (CURL * and
// struct curl_slist * are opaque here; curl_off_t is int64_t on every 64-bit platform).
typedef int (*global_init_f)(long flags);
typedef void *(*easy_init_f)(void);
typedef void (*easy_cleanup_f)(void *);
typedef int (*easy_perform_f)(void *);
typedef const char *(*easy_strerror_f)(int);
typedef int (*easy_setopt_f)(void *, int, ...);
typedef int (*easy_getinfo_f)(void *, int, ...);
typedef void *(*slist_append_f)(void *, const char *);
typedef void (*slist_free_all_f)(void *);

struct ccurl_library {
    const char *name;
    easy_init_f easy_init;
    easy_cleanup_f easy_cleanup;
    easy_perform_f easy_perform;
    easy_strerror_f easy_strerror;
    easy_setopt_f easy_setopt;
    easy_getinfo_f easy_getinfo;
    slist_append_f slist_append;
    slist_free_all_f slist_free_all;
};

enum { CCURL_GLOBAL_ALL = 3, MAX_LIBRARIES = 8 };

// Libraries loaded so far, by the name they were opened under; they stay loaded (and
// initialised) for the life of the process, as curl_global_init wants.
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ccurl_library *loaded[MAX_LIBRARIES];
static size_t loaded_count;

static ccurl_library *find(const char *name) {
    for (size_t i = 0; i < loaded_count; i++) {
        if (strcmp(loaded[i]->name, name) == 0) return loaded[i];
    }
    return NULL;
}

static ccurl_library *open_library(const char *name, char *error, size_t error_size) {
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(error, error_size, "%s", reason != NULL ? reason : name);
        return NULL;
    }
    ccurl_library *library = calloc(1, sizeof *library);
    char *copy = strdup(name);
    if (library == NULL || copy == NULL) {
        free(library);
        free(copy);
        dlclose(handle);
        snprintf(error, error_size, "out of memory loading %s", name);
        return NULL;
    }
    library->name = copy;
    global_init_f global_init = (global_init_f)dlsym(handle, "curl_global_init");
    library->easy_init = (easy_init_f)dlsym(handle, "curl_easy_init");
    library->easy_cleanup = (easy_cleanup_f)dlsym(handle, "curl_easy_cleanup");
    library->easy_perform = (easy_perform_f)dlsym(handle, "curl_easy_perform");
    library->easy_strerror = (easy_strerror_f)dlsym(handle, "curl_easy_strerror");
    library->easy_setopt = (easy_setopt_f)dlsym(handle, "curl_easy_setopt");
    library->easy_getinfo = (easy_getinfo_f)dlsym(handle, "curl_easy_getinfo");
    library->slist_append = (slist_append_f)dlsym(handle, "curl_slist_append");
    library->slist_free_all = (slist_free_all_f)dlsym(handle, "curl_slist_free_all");
    if (global_init == NULL || library->easy_init == NULL || library->easy_cleanup == NULL ||
        library->easy_perform == NULL || library->easy_strerror == NULL || library->easy_setopt == NULL ||
        library->easy_getinfo == NULL || library->slist_append == NULL || library->slist_free_all == NULL) {
        snprintf(error, error_size, "%s is not libcurl (a function is missing)", name);
    } else if (global_init(CCURL_GLOBAL_ALL) != 0) {
        snprintf(error, error_size, "%s failed to initialise", name);
    } else {
        return library;
    }
    free(copy);
    free(library);
    dlclose(handle);
    return NULL;
}

const ccurl_library *ccurl_load(const char *const *names, size_t count, char *error, size_t error_size) {
    if (error_size > 0) error[0] = '\0';
    // curl_global_init is not thread-safe: loading is serialised.
    pthread_mutex_lock(&lock);
    ccurl_library *library = NULL;
    for (size_t i = 0; i < count && library == NULL; i++) {
        library = find(names[i]);
        if (library != NULL) break;
        if (loaded_count == MAX_LIBRARIES) {
            snprintf(error, error_size, "%d libraries are loaded already, not %s", MAX_LIBRARIES, names[i]);
            break;
        }
        library = open_library(names[i], error, error_size);
        if (library != NULL) loaded[loaded_count++] = library;
    }
    pthread_mutex_unlock(&lock);
    return library;
}

void *ccurl_easy_init(const ccurl_library *library) { return library->easy_init(); }

void ccurl_easy_cleanup(const ccurl_library *library, void *handle) { library->easy_cleanup(handle); }

long ccurl_easy_perform(const ccurl_library *library, void *handle) { return library->easy_perform(handle); }

const char *ccurl_easy_strerror(const ccurl_library *library, long code) { return library->easy_strerror((int)code); }

long ccurl_setopt_long(const ccurl_library *library, void *handle, long option, long value) {
    return library->easy_setopt(handle, (int)option, value);
}

long ccurl_setopt_int64(const ccurl_library *library, void *handle, long option, int64_t value) {
    return library->easy_setopt(handle, (int)option, value);
}

long ccurl_setopt_string(const ccurl_library *library, void *handle, long option, const char *value) {
    return library->easy_setopt(handle, (int)option, value);
}

long ccurl_setopt_pointer(const ccurl_library *library, void *handle, long option, const void *value) {
    return library->easy_setopt(handle, (int)option, value);
}

// struct curl_blob as curl/easy.h declares it; CURL_BLOB_COPY (1): libcurl keeps a copy.
struct ccurl_blob {
    void *data;
    size_t len;
    unsigned int flags;
};
enum { CCURL_BLOB_COPY = 1 };

long ccurl_setopt_blob(const ccurl_library *library, void *handle, long option, const void *data, size_t length) {
    struct ccurl_blob blob = {(void *)data, length, CCURL_BLOB_COPY};
    return library->easy_setopt(handle, (int)option, &blob);
}

long ccurl_setopt_data_callback(const ccurl_library *library, void *handle, long option, ccurl_data_callback callback) {
    return library->easy_setopt(handle, (int)option, callback);
}

long ccurl_setopt_progress_callback(const ccurl_library *library, void *handle, long option, ccurl_progress_callback callback) {
    return library->easy_setopt(handle, (int)option, callback);
}

long ccurl_getinfo_long(const ccurl_library *library, void *handle, long info, long *value) {
    return library->easy_getinfo(handle, (int)info, value);
}

long ccurl_getinfo_string(const ccurl_library *library, void *handle, long info, const char **value) {
    return library->easy_getinfo(handle, (int)info, value);
}

void *ccurl_slist_append(const ccurl_library *library, void *list, const char *line) {
    return library->slist_append(list, line);
}

void ccurl_slist_free_all(const ccurl_library *library, void *list) { library->slist_free_all(list); }

// Where curl's own headers are installed, the numbers of CCurl.h are checked against them.
#if __has_include(<curl/curl.h>)
#define CURL_DISABLE_DEPRECATION
#include <curl/curl.h>
_Static_assert((long)CCURL_GLOBAL_ALL == (long)CURL_GLOBAL_ALL, "CURL_GLOBAL_ALL");
_Static_assert((long)CCURL_ERROR_SIZE == (long)CURL_ERROR_SIZE, "CURL_ERROR_SIZE");
_Static_assert((long)CCURLOPT_WRITEDATA == (long)CURLOPT_WRITEDATA, "CURLOPT_WRITEDATA");
_Static_assert((long)CCURLOPT_URL == (long)CURLOPT_URL, "CURLOPT_URL");
_Static_assert((long)CCURLOPT_PROXY == (long)CURLOPT_PROXY, "CURLOPT_PROXY");
_Static_assert((long)CCURLOPT_CAPATH == (long)CURLOPT_CAPATH, "CURLOPT_CAPATH");
_Static_assert((long)CCURLOPT_HTTP_CONTENT_DECODING == (long)CURLOPT_HTTP_CONTENT_DECODING, "CURLOPT_HTTP_CONTENT_DECODING");
_Static_assert((long)CCURLOPT_NOPROXY == (long)CURLOPT_NOPROXY, "CURLOPT_NOPROXY");
_Static_assert((long)CCURLOPT_CAINFO_BLOB == (long)CURLOPT_CAINFO_BLOB, "CURLOPT_CAINFO_BLOB");
_Static_assert((long)CCURLINFO_REDIRECT_URL == (long)CURLINFO_REDIRECT_URL, "CURLINFO_REDIRECT_URL");
_Static_assert((long)CCURLE_WRITE_ERROR == (long)CURLE_WRITE_ERROR, "CURLE_WRITE_ERROR");
_Static_assert((long)CCURLE_PROXY == (long)CURLE_PROXY, "CURLE_PROXY");
_Static_assert((long)CCURL_BLOB_COPY == (long)CURL_BLOB_COPY, "CURL_BLOB_COPY");
_Static_assert(sizeof(struct ccurl_blob) == sizeof(struct curl_blob), "struct curl_blob");
_Static_assert(offsetof(struct ccurl_blob, len) == offsetof(struct curl_blob, len), "curl_blob.len");
_Static_assert(offsetof(struct ccurl_blob, flags) == offsetof(struct curl_blob, flags), "curl_blob.flags");
_Static_assert((long)CCURLOPT_ERRORBUFFER == (long)CURLOPT_ERRORBUFFER, "CURLOPT_ERRORBUFFER");
_Static_assert((long)CCURLOPT_WRITEFUNCTION == (long)CURLOPT_WRITEFUNCTION, "CURLOPT_WRITEFUNCTION");
_Static_assert((long)CCURLOPT_USERAGENT == (long)CURLOPT_USERAGENT, "CURLOPT_USERAGENT");
_Static_assert((long)CCURLOPT_HTTPHEADER == (long)CURLOPT_HTTPHEADER, "CURLOPT_HTTPHEADER");
_Static_assert((long)CCURLOPT_HEADERDATA == (long)CURLOPT_HEADERDATA, "CURLOPT_HEADERDATA");
_Static_assert((long)CCURLOPT_NOPROGRESS == (long)CURLOPT_NOPROGRESS, "CURLOPT_NOPROGRESS");
_Static_assert((long)CCURLOPT_FOLLOWLOCATION == (long)CURLOPT_FOLLOWLOCATION, "CURLOPT_FOLLOWLOCATION");
_Static_assert((long)CCURLOPT_XFERINFODATA == (long)CURLOPT_XFERINFODATA, "CURLOPT_XFERINFODATA");
_Static_assert((long)CCURLOPT_CAINFO == (long)CURLOPT_CAINFO, "CURLOPT_CAINFO");
_Static_assert((long)CCURLOPT_MAXREDIRS == (long)CURLOPT_MAXREDIRS, "CURLOPT_MAXREDIRS");
_Static_assert((long)CCURLOPT_HEADERFUNCTION == (long)CURLOPT_HEADERFUNCTION, "CURLOPT_HEADERFUNCTION");
_Static_assert((long)CCURLOPT_HTTPGET == (long)CURLOPT_HTTPGET, "CURLOPT_HTTPGET");
_Static_assert((long)CCURLOPT_NOSIGNAL == (long)CURLOPT_NOSIGNAL, "CURLOPT_NOSIGNAL");
_Static_assert((long)CCURLOPT_ACCEPT_ENCODING == (long)CURLOPT_ACCEPT_ENCODING, "CURLOPT_ACCEPT_ENCODING");
_Static_assert((long)CCURLOPT_MAXFILESIZE_LARGE == (long)CURLOPT_MAXFILESIZE_LARGE, "CURLOPT_MAXFILESIZE_LARGE");
_Static_assert((long)CCURLOPT_TIMEOUT_MS == (long)CURLOPT_TIMEOUT_MS, "CURLOPT_TIMEOUT_MS");
_Static_assert((long)CCURLOPT_PROTOCOLS == (long)CURLOPT_PROTOCOLS, "CURLOPT_PROTOCOLS");
_Static_assert((long)CCURLOPT_REDIR_PROTOCOLS == (long)CURLOPT_REDIR_PROTOCOLS, "CURLOPT_REDIR_PROTOCOLS");
_Static_assert((long)CCURLOPT_XFERINFOFUNCTION == (long)CURLOPT_XFERINFOFUNCTION, "CURLOPT_XFERINFOFUNCTION");
_Static_assert((long)CCURLPROTO_HTTP == (long)CURLPROTO_HTTP, "CURLPROTO_HTTP");
_Static_assert((long)CCURLPROTO_HTTPS == (long)CURLPROTO_HTTPS, "CURLPROTO_HTTPS");
_Static_assert((long)CCURLINFO_EFFECTIVE_URL == (long)CURLINFO_EFFECTIVE_URL, "CURLINFO_EFFECTIVE_URL");
_Static_assert((long)CCURLINFO_RESPONSE_CODE == (long)CURLINFO_RESPONSE_CODE, "CURLINFO_RESPONSE_CODE");
_Static_assert((long)CCURLE_OK == (long)CURLE_OK, "CURLE_OK");
_Static_assert((long)CCURLE_UNSUPPORTED_PROTOCOL == (long)CURLE_UNSUPPORTED_PROTOCOL, "CURLE_UNSUPPORTED_PROTOCOL");
_Static_assert((long)CCURLE_URL_MALFORMAT == (long)CURLE_URL_MALFORMAT, "CURLE_URL_MALFORMAT");
_Static_assert((long)CCURLE_COULDNT_RESOLVE_PROXY == (long)CURLE_COULDNT_RESOLVE_PROXY, "CURLE_COULDNT_RESOLVE_PROXY");
_Static_assert((long)CCURLE_COULDNT_RESOLVE_HOST == (long)CURLE_COULDNT_RESOLVE_HOST, "CURLE_COULDNT_RESOLVE_HOST");
_Static_assert((long)CCURLE_COULDNT_CONNECT == (long)CURLE_COULDNT_CONNECT, "CURLE_COULDNT_CONNECT");
_Static_assert((long)CCURLE_WEIRD_SERVER_REPLY == (long)CURLE_WEIRD_SERVER_REPLY, "CURLE_WEIRD_SERVER_REPLY");
_Static_assert((long)CCURLE_HTTP2 == (long)CURLE_HTTP2, "CURLE_HTTP2");
_Static_assert((long)CCURLE_PARTIAL_FILE == (long)CURLE_PARTIAL_FILE, "CURLE_PARTIAL_FILE");
_Static_assert((long)CCURLE_OPERATION_TIMEDOUT == (long)CURLE_OPERATION_TIMEDOUT, "CURLE_OPERATION_TIMEDOUT");
_Static_assert((long)CCURLE_SSL_CONNECT_ERROR == (long)CURLE_SSL_CONNECT_ERROR, "CURLE_SSL_CONNECT_ERROR");
_Static_assert((long)CCURLE_TOO_MANY_REDIRECTS == (long)CURLE_TOO_MANY_REDIRECTS, "CURLE_TOO_MANY_REDIRECTS");
_Static_assert((long)CCURLE_GOT_NOTHING == (long)CURLE_GOT_NOTHING, "CURLE_GOT_NOTHING");
_Static_assert((long)CCURLE_SEND_ERROR == (long)CURLE_SEND_ERROR, "CURLE_SEND_ERROR");
_Static_assert((long)CCURLE_RECV_ERROR == (long)CURLE_RECV_ERROR, "CURLE_RECV_ERROR");
_Static_assert((long)CCURLE_SSL_CERTPROBLEM == (long)CURLE_SSL_CERTPROBLEM, "CURLE_SSL_CERTPROBLEM");
_Static_assert((long)CCURLE_SSL_CIPHER == (long)CURLE_SSL_CIPHER, "CURLE_SSL_CIPHER");
_Static_assert((long)CCURLE_PEER_FAILED_VERIFICATION == (long)CURLE_PEER_FAILED_VERIFICATION, "CURLE_PEER_FAILED_VERIFICATION");
_Static_assert((long)CCURLE_BAD_CONTENT_ENCODING == (long)CURLE_BAD_CONTENT_ENCODING, "CURLE_BAD_CONTENT_ENCODING");
_Static_assert((long)CCURLE_FILESIZE_EXCEEDED == (long)CURLE_FILESIZE_EXCEEDED, "CURLE_FILESIZE_EXCEEDED");
_Static_assert((long)CCURLE_SSL_CACERT_BADFILE == (long)CURLE_SSL_CACERT_BADFILE, "CURLE_SSL_CACERT_BADFILE");
_Static_assert((long)CCURLE_SSL_CRL_BADFILE == (long)CURLE_SSL_CRL_BADFILE, "CURLE_SSL_CRL_BADFILE");
_Static_assert((long)CCURLE_SSL_ISSUER_ERROR == (long)CURLE_SSL_ISSUER_ERROR, "CURLE_SSL_ISSUER_ERROR");
_Static_assert((long)CCURLE_HTTP2_STREAM == (long)CURLE_HTTP2_STREAM, "CURLE_HTTP2_STREAM");
_Static_assert((long)CCURLE_SSL_CLIENTCERT == (long)CURLE_SSL_CLIENTCERT, "CURLE_SSL_CLIENTCERT");
#endif
