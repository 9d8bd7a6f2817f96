internal import CCurl
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The one Swift file that speaks libcurl (through the CCurl shim): the rest of FeedAPI sees
// `CurlLibrary` and `CurlRequest`, never a C name.

/// libcurl's shared library, loaded with `dlopen` when a request first needs it, so that a program
/// that never goes to the network never maps it (nor TLS, Kerberos, LDAP… which it brings).
struct CurlLibrary: @unchecked Sendable {
    /// The library's functions; loaded once per process, never unloaded.
    fileprivate let functions: OpaquePointer

    /// The file names libcurl is found under on this platform, tried in order.
    static var defaultNames: [String] {
        #if canImport(Darwin)
        ["libcurl.4.dylib"]
        #else
        ["libcurl.so.4"]
        #endif
    }

    /// The first of `names` that loads, or why none did (the dynamic loader's words).
    static func load(_ names: [String]) -> Result<CurlLibrary, CurlLoadError> {
        var error = [CChar](repeating: 0, count: 512)
        let copies = names.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let loaded = copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { names in
            names.baseAddress.flatMap { ccurl_load($0, names.count, &error, error.count) }
        }
        guard let loaded else {
            return .failure(CurlLoadError(names: names, reason: String(decoding: error.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)))
        }
        return .success(CurlLibrary(functions: loaded))
    }
}

/// libcurl could not be loaded.
struct CurlLoadError: Error {
    let names: [String]
    /// The dynamic loader's explanation, such as `libcurl.so.4: cannot open shared object file`.
    let reason: String
}

/// One GET through libcurl's easy interface, redirects included. ``perform()`` blocks its thread
/// until the transfer ends; ``cancel()``, from any thread, makes it end within about a second
/// (libcurl asks the progress callback at least that often, also while nothing arrives).
///
/// Redirects are followed here, not by libcurl, one transfer per hop on the same handle (so a
/// connection is reused): each target is checked before it is asked (never from https to http,
/// never to a scheme other than http and https), each hop goes through the proxy the settings
/// give its URL, and the whole chain shares one timeout.
final class CurlRequest: @unchecked Sendable {
    /// How a transfer ended.
    enum Outcome {
        case response(Data, HTTPResponse)
        case failure(HTTPClientError)
        case cancelled
    }

    /// Which certificates a TLS peer is verified against.
    enum Trust {
        /// The system's store (libcurl's default bundle and directory).
        case system
        /// This file alone, read by libcurl.
        case file(String)
        /// These PEM bytes alone.
        case certificates(Data)
    }

    struct Options {
        var userAgent: String
        var maxBodySize: Int
        /// 0: no limit.
        var timeoutMilliseconds: Int
        var trust: Trust
        var proxy: CurlHTTPClient.Proxy
    }

    /// Redirects followed before giving up, as browsers do (Chrome and Firefox: 20).
    static let maxRedirects = 20
    /// The statuses that redirect a GET; a 304 (or 300) with a Location is delivered as it came.
    private static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    private let library: CurlLibrary
    private let url: URL
    private let headers: [String: String]
    private let options: Options
    private let cancelled = Locked(false)

    // Touched only by the thread in perform() (and libcurl's callbacks, on that same thread).
    private var body = Data()
    private var fields: [String: String] = [:]
    private var status = 0
    private var tooLarge = false
    /// Bytes received for this response, before any decoding.
    private var received = 0
    /// Whether this response's headers were looked at (when its first byte of body came).
    private var bodyStarted = false
    /// This response is a redirect: its body is dropped.
    private var isRedirect = false
    private var decoder: ContentDecoder?
    private var decodeFailure: ContentDecoder.Failure?

    init(library: CurlLibrary, url: URL, headers: [String: String], options: Options) {
        self.library = library
        self.url = url
        self.headers = headers
        self.options = options
    }

    /// Asks the transfer to stop.
    func cancel() { cancelled.withLock { $0 = true } }

    fileprivate var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Runs the transfer on the calling thread.
    func perform() -> Outcome {
        let functions = library.functions
        guard let handle = ccurl_easy_init(functions) else {
            return .failure(.transport(code: .unknown, message: "libcurl could not start a transfer"))
        }
        var headerList: UnsafeMutableRawPointer?
        // The header list must outlive the transfer: freed after the handle.
        defer {
            ccurl_easy_cleanup(functions, handle)
            if let headerList { ccurl_slist_free_all(functions, headerList) }
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            // A header line cannot hold a line break (libcurl would send the rest as a header of
            // its own) nor a NUL (which would end it).
            guard !(name + value).contains(where: { $0.isNewline || $0 == "\0" }) else { continue }
            let line = HeaderBytes.encode(name) + Array(": ".utf8) + HeaderBytes.encode(value) + [0]
            let appended = line.withUnsafeBufferPointer { line in
                line.baseAddress.flatMap { bytes in
                    bytes.withMemoryRebound(to: CChar.self, capacity: line.count) { ccurl_slist_append(functions, headerList, $0) }
                }
            }
            guard let appended else { return .failure(.transport(code: .unknown, message: "out of memory")) }
            headerList = appended
        }
        var errorBuffer = [CChar](repeating: 0, count: CCURL_ERROR_SIZE)
        let context = Unmanaged.passUnretained(self).toOpaque()

        return errorBuffer.withUnsafeMutableBufferPointer { errorBuffer -> Outcome in
            let long = { (option: Int, value: Int) in ccurl_setopt_long(functions, handle, option, value) }
            // libcurl copies the strings (and the blob) it is given.
            let text = { (option: Int, value: String) in ccurl_setopt_string(functions, handle, option, value) }
            let pointer = { (option: Int, value: UnsafeRawPointer?) in ccurl_setopt_pointer(functions, handle, option, value) }
            let trust: [Int] = switch options.trust {
            case .system: []
            // CAPATH unset: libcurl's default directory (/etc/ssl/certs) would be trusted too.
            case .file(let path): [text(CCURLOPT_CAINFO, path), pointer(CCURLOPT_CAPATH, nil)]
            case .certificates(let pem):
                [pem.withUnsafeBytes { ccurl_setopt_blob(functions, handle, CCURLOPT_CAINFO_BLOB, $0.baseAddress, $0.count) },
                 pointer(CCURLOPT_CAPATH, nil)]
            }
            let setup = trust + [
                long(CCURLOPT_HTTPGET, 1),
                // Threads, not signals: a signal would reach whatever the process is doing.
                long(CCURLOPT_NOSIGNAL, 1),
                // Redirects are followed by perform()'s loop, which checks each target first.
                long(CCURLOPT_FOLLOWLOCATION, 0),
                long(CCURLOPT_PROTOCOLS, CCURLPROTO_HTTP | CCURLPROTO_HTTPS),
                long(CCURLOPT_REDIR_PROTOCOLS, CCURLPROTO_HTTP | CCURLPROTO_HTTPS),
                text(CCURLOPT_USERAGENT, options.userAgent),
                // The body comes as sent and ContentDecoder decodes it: libcurl's decoding accepts
                // a truncated gzip body.
                text(CCURLOPT_ACCEPT_ENCODING, ContentDecoder.acceptEncoding),
                long(CCURLOPT_HTTP_CONTENT_DECODING, 0),
                // The proxy is decided per hop (below); libcurl must not second-guess it with no_proxy.
                text(CCURLOPT_NOPROXY, ""),
                // Refused before the body when Content-Length announces more; counted below otherwise.
                ccurl_setopt_int64(functions, handle, CCURLOPT_MAXFILESIZE_LARGE, Int64(options.maxBodySize)),
                pointer(CCURLOPT_ERRORBUFFER, errorBuffer.baseAddress),
                ccurl_setopt_data_callback(functions, handle, CCURLOPT_WRITEFUNCTION, receiveBody),
                pointer(CCURLOPT_WRITEDATA, context),
                ccurl_setopt_data_callback(functions, handle, CCURLOPT_HEADERFUNCTION, receiveHeader),
                pointer(CCURLOPT_HEADERDATA, context),
                long(CCURLOPT_NOPROGRESS, 0),
                ccurl_setopt_progress_callback(functions, handle, CCURLOPT_XFERINFOFUNCTION, checkCancelled),
                pointer(CCURLOPT_XFERINFODATA, context),
                headerList.map { pointer(CCURLOPT_HTTPHEADER, $0) } ?? CCURLE_OK,
            ]
            // The buffer is valid only in this closure.
            defer { _ = pointer(CCURLOPT_ERRORBUFFER, nil) }
            if let failed = setup.first(where: { $0 != CCURLE_OK }) {
                return .failure(failure(code: failed, errorBuffer: errorBuffer, proxy: nil))
            }

            let clock = ContinuousClock()
            let start = clock.now
            var current = url
            var redirects = 0
            while true {
                let proxy = options.proxy.server(for: current)
                var timeout = 0
                if options.timeoutMilliseconds > 0 {
                    let elapsed = start.duration(to: clock.now)
                    let left = Duration.milliseconds(options.timeoutMilliseconds) - elapsed
                    guard left > .zero else {
                        return .failure(.transport(code: .timedOut, message: "no complete response within \(options.timeoutMilliseconds) ms"))
                    }
                    let (seconds, attoseconds) = left.components
                    timeout = max(1, Int(clamping: seconds) &* 1000 &+ Int(attoseconds / 1_000_000_000_000_000))
                }
                let hop = [
                    text(CCURLOPT_URL, current.absoluteString),
                    // "": no proxy, whatever the environment says (the settings decided above).
                    text(CCURLOPT_PROXY, proxy ?? ""),
                    long(CCURLOPT_TIMEOUT_MS, timeout),
                ]
                if let failed = hop.first(where: { $0 != CCURLE_OK }) {
                    return .failure(failure(code: failed, errorBuffer: errorBuffer, proxy: nil))
                }
                startResponse()
                errorBuffer[0] = 0
                let code = ccurl_easy_perform(functions, handle)

                if isCancelled { return .cancelled }
                if tooLarge || code == CCURLE_FILESIZE_EXCEEDED || decodeFailure == .tooLarge {
                    return .failure(.bodyTooLarge(limit: options.maxBodySize))
                }
                if let decodeFailure { return .failure(.transport(code: .cannotDecodeContentData, message: decodeFailure.description)) }
                guard code == CCURLE_OK else { return .failure(failure(code: code, errorBuffer: errorBuffer, proxy: proxy)) }

                var responseCode = 0
                var redirectTarget: UnsafePointer<CChar>?
                var effectiveURL: UnsafePointer<CChar>?
                _ = ccurl_getinfo_long(functions, handle, CCURLINFO_RESPONSE_CODE, &responseCode)
                _ = ccurl_getinfo_string(functions, handle, CCURLINFO_REDIRECT_URL, &redirectTarget)
                _ = ccurl_getinfo_string(functions, handle, CCURLINFO_EFFECTIVE_URL, &effectiveURL)
                let answered = effectiveURL.flatMap { URL(string: String(cString: $0)) } ?? current
                // 407 is the proxy's own answer (an origin server never sends it): the request
                // never got past the proxy, which wants credentials.
                if let proxy, responseCode == 407 {
                    return .failure(.proxyFailed(
                        proxy: CurlHTTPClient.Proxy.displayName(proxy), code: .userAuthenticationRequired,
                        message: "it answered HTTP 407, Proxy Authentication Required"))
                }

                if Self.redirectStatuses.contains(responseCode), let redirectTarget {
                    let target = String(cString: redirectTarget)
                    let scheme = HTTPClientError.scheme(of: target)
                    guard scheme == "http" || scheme == "https" else { return .failure(.redirectRefused(from: answered, to: target)) }
                    guard scheme == "https" || answered.scheme?.lowercased() != "https" else {
                        return .failure(.redirectRefused(from: answered, to: target))
                    }
                    guard redirects < Self.maxRedirects else {
                        return .failure(.transport(
                            code: .httpTooManyRedirects, message: "more than \(Self.maxRedirects), the last to \(target)"))
                    }
                    guard let next = URL(string: target) else {
                        return .failure(.transport(code: .badServerResponse, message: "a redirect to \(target), which is not a URL"))
                    }
                    redirects += 1
                    current = next
                    continue
                }
                if let decoder {
                    do throws(ContentDecoder.Failure) {
                        try decoder.finish()
                    } catch {
                        return .failure(.transport(code: .cannotDecodeContentData, message: error.description))
                    }
                }
                return .response(body, HTTPResponse(url: answered, statusCode: responseCode, headerFields: fields))
            }
        }
    }

    /// What a failed transfer's `code` means; a failure to reach `proxy` (the hop's, nil when
    /// none) is named as the proxy's.
    private func failure(code: Int, errorBuffer: UnsafeMutableBufferPointer<CChar>, proxy: String?) -> HTTPClientError {
        let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
        let message = detail.isEmpty ? String(cString: ccurl_easy_strerror(library.functions, code)) : detail
        // A tunnel the proxy would not open (`CONNECT tunnel failed, response 407`) fails the
        // request before it reaches the remote, whatever code libcurl files it under.
        if let proxy, [CCURLE_COULDNT_RESOLVE_PROXY, CCURLE_COULDNT_CONNECT, CCURLE_PROXY].contains(code) || message.hasPrefix("CONNECT tunnel failed") {
            return .proxyFailed(proxy: CurlHTTPClient.Proxy.displayName(proxy), code: Self.urlErrorCode(code), message: message)
        }
        if code == CCURLE_SSL_CACERT_BADFILE {
            return .transport(code: .secureConnectionFailed, message: "the trusted certificates could not be used: \(message)")
        }
        return .transport(code: Self.urlErrorCode(code), message: message)
    }

    /// Forgets the previous hop's response.
    private func startResponse() {
        body = Data()
        fields = [:]
        status = 0
        tooLarge = false
        received = 0
        bodyStarted = false
        isRedirect = false
        decoder = nil
        decodeFailure = nil
    }

    /// A chunk of the body, decoded when the response says it is encoded; false (abort) once the
    /// body would pass the limit or does not decode.
    fileprivate func receive(body chunk: UnsafeRawBufferPointer) -> Bool {
        if !bodyStarted {
            bodyStarted = true
            isRedirect = Self.redirectStatuses.contains(status) && field("Location") != nil
            if !isRedirect {
                do throws(ContentDecoder.Failure) {
                    decoder = try ContentDecoder.make(contentEncoding: field("Content-Encoding"))
                } catch {
                    decodeFailure = error
                    return false
                }
            }
        }
        // A redirect's body is nobody's: dropped as it comes.
        if isRedirect { return true }
        received += chunk.count
        guard received <= options.maxBodySize else {
            tooLarge = true
            body = Data()
            return false
        }
        if let decoder {
            do throws(ContentDecoder.Failure) {
                try decoder.decode(chunk, into: &body, limit: options.maxBodySize)
            } catch {
                decodeFailure = error
                body = Data()
                return false
            }
            return true
        }
        body.append(contentsOf: chunk)
        return true
    }

    /// The value of this response's field `name`, case aside.
    private func field(_ name: String) -> String? {
        let wanted = name.lowercased()
        return fields.first { $0.key.lowercased() == wanted }?.value
    }

    /// One header line, its bytes read as ISO-8859-1 (each byte one character, U+0000 to U+00FF)
    /// so that a value is kept byte for byte, whatever it holds, and goes back out the same (an
    /// ETag as If-None-Match). A status line starts a new response (after a 100 Continue): only
    /// the last response's fields are kept.
    fileprivate func receive(headerLine: UnsafeRawBufferPointer) {
        let line = HeaderBytes.decode(headerLine)
        if line.hasPrefix("HTTP/") {
            fields = [:]
            status = line.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0.prefix { $0.isASCII && $0.isNumber }) } ?? 0
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        // HTTP's optional whitespace: spaces and tabs (and the line's CR LF at the end).
        let name = line[..<colon].trimmingHTTPWhitespace
        let value = line[line.index(after: colon)...].trimmingHTTPWhitespace
        guard !name.isEmpty else { return }
        // A field sent twice is one list, as HTTP defines it.
        if let key = fields.keys.first(where: { $0.lowercased() == name.lowercased() }), let earlier = fields[key] {
            fields[key] = earlier + ", " + value
        } else {
            fields[name] = value
        }
    }

    /// The code that names what libcurl's `code` means (as URLSession would report it).
    private static func urlErrorCode(_ code: Int) -> HTTPClientError.TransportCode {
        switch code {
        case CCURLE_UNSUPPORTED_PROTOCOL: .unsupportedURL
        case CCURLE_URL_MALFORMAT: .badURL
        case CCURLE_COULDNT_RESOLVE_HOST, CCURLE_COULDNT_RESOLVE_PROXY: .cannotFindHost
        case CCURLE_COULDNT_CONNECT, CCURLE_PROXY: .cannotConnectToHost
        case CCURLE_OPERATION_TIMEDOUT: .timedOut
        case CCURLE_TOO_MANY_REDIRECTS: .httpTooManyRedirects
        case CCURLE_PEER_FAILED_VERIFICATION, CCURLE_SSL_ISSUER_ERROR: .serverCertificateUntrusted
        case CCURLE_SSL_CONNECT_ERROR, CCURLE_SSL_CIPHER, CCURLE_SSL_CERTPROBLEM, CCURLE_SSL_CACERT_BADFILE,
             CCURLE_SSL_CRL_BADFILE, CCURLE_SSL_CLIENTCERT:
            .secureConnectionFailed
        case CCURLE_GOT_NOTHING, CCURLE_WEIRD_SERVER_REPLY: .badServerResponse
        case CCURLE_SEND_ERROR, CCURLE_RECV_ERROR, CCURLE_PARTIAL_FILE, CCURLE_HTTP2, CCURLE_HTTP2_STREAM: .networkConnectionLost
        case CCURLE_BAD_CONTENT_ENCODING: .cannotDecodeContentData
        default: .unknown
        }
    }
}

/// Header bytes as Swift text and back, byte for byte: ISO-8859-1, each byte the character of
/// the same number (U+0000 to U+00FF). HTTP never said header values were UTF-8, and a server's
/// ETag may hold any byte; decoding as UTF-8 would turn the bytes that are not into U+FFFD, and
/// send back something else.
enum HeaderBytes {
    static func decode(_ bytes: UnsafeRawBufferPointer) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: bytes.lazy.map { Unicode.Scalar($0) })
        return String(scalars)
    }

    /// `text`'s bytes: ISO-8859-1 when every character is in it (as header values received are),
    /// else UTF-8 (text of the caller's own, such as a validator from another client).
    static func encode(_ text: String) -> [UInt8] {
        let scalars = text.unicodeScalars
        guard scalars.allSatisfy({ $0.value <= 0xFF }) else { return Array(text.utf8) }
        return scalars.map { UInt8(truncatingIfNeeded: $0.value) }
    }
}

// libcurl's callbacks: C function pointers, so they capture nothing; `context` is the request.
// libcurl gives the size of a byte as 1: `count` bytes arrived.

private func curlRequest(_ context: UnsafeMutableRawPointer?) -> CurlRequest? {
    context.map { Unmanaged<CurlRequest>.fromOpaque($0).takeUnretainedValue() }
}

private func receiveBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    let length = size &* count
    guard let request = curlRequest(context) else { return 0 }
    return request.receive(body: UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

private func receiveHeader(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    let length = size &* count
    curlRequest(context)?.receive(headerLine: UnsafeRawBufferPointer(start: data, count: length))
    return length
}

private func checkCancelled(_ context: UnsafeMutableRawPointer?, _: Int64, _: Int64, _: Int64, _: Int64) -> Int32 {
    curlRequest(context)?.isCancelled == false ? 0 : 1
}

extension Substring {
    /// Without HTTP's whitespace at its ends: spaces and tabs, and the CR LF that ends a line.
    fileprivate var trimmingHTTPWhitespace: String {
        let isWhitespace = { (character: Character) in character == " " || character == "\t" || character == "\r\n" || character == "\r" || character == "\n" }
        return String(drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed())
    }
}
