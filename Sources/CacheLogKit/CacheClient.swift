import CoreMetrics
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// The one object an app opens on a cache database: it holds the clock, the HTTP client, the
/// logger and the metrics, and makes the resources that load through them (feeds, searches,
/// images), the validation a cron job runs, and the history an audit reads.
///
/// ```swift
/// let cache = try CacheClient(directory: cacheDirectory)
/// let films = try await cache.feed("films", at: filmsURL, contract: .films).load()
/// ```
///
/// The clock is taken once, here: every save it stamps, every age it judges and every event the
/// log records come from it. The parts it composes (`LocalFeedLoader`, `CacheLogFeedStore`,
/// `RemoteLoader`, the strategies) stay public for an app that composes its own.
///
/// A client opened on a directory without a database creates nothing until the first save: a
/// load that fails, or a validation, leaves the disk as it was.
public final class CacheClient: Sendable {
    /// How a client opens its database and reaches the network.
    public struct Options: Sendable {
        /// The clock: stamps saves and the log's events, and judges ages.
        public var clock: @Sendable () -> Date
        /// What fetches the remote; `nil` for the package's default client, a `CurlHTTPClient`
        /// (libcurl, loaded when the first request needs it) sending `cachelog/VERSION`.
        public var http: (any HTTPClient)?
        /// Where the use cases log what they do; by default nowhere: the library is quiet unless
        /// the app gives it a logger, whose label and level it keeps. Then a save that fails says
        /// so once, at `warning`; a failed request (which a cache or a retry may still cover), at
        /// `info`; what goes well, at `debug`.
        public var logger: Logger
        /// Where the counters and timers go; `nil` for the factory `MetricsSystem` was
        /// bootstrapped with (none: nothing is recorded, nothing is paid).
        public var metrics: (any MetricsFactory)?
        /// Whether a save waits for the disk (`EventLog/Durability`).
        public var durability: EventLog.Durability
        /// Open for reading only: loads that save and validations that write fail.
        public var readOnly: Bool
        /// The retention policy to record when this client creates the database (its first save
        /// does): how much history it keeps and how large it may grow. A database that exists
        /// keeps its own (`EventLog.setRetentionPolicy(_:by:)` changes it); without one, a new
        /// database follows `RetentionPolicy.default` (30 days, 256 MiB).
        public var retention: RetentionPolicy?
        /// The most the client keeps of decoded items in memory, in payload bytes: a load whose
        /// key's payload is unchanged in the log since it was decoded reuses its items, without
        /// inflating or decoding again (32 MiB by default; 0 keeps nothing). The log stays the
        /// truth: a save by another process, a removal or an expiry is seen by the next load.
        public var memoryLimit: Int
        /// What opening a database whose data file is damaged does (`CacheLogError.isDamage`):
        /// throw it (`.fail`, the default), or move the file aside, kept for a bug report, and
        /// start a new database that records why (`.moveAside`, `DamageRecovery`).
        public var onDamage: DamageRecovery
        /// Write to a database whose directory or files other users own or may write: a cache a
        /// group shares on purpose (`EventLog.Options.sharedWithOtherUsers`). Off by default.
        public var sharedWithOtherUsers: Bool

        /// The logger a client takes when given none: it logs nothing, whatever swift-log was
        /// bootstrapped with.
        public static var defaultLogger: Logger {
            Logger(label: "cachelog") { _ in SwiftLogNoOpLogHandler() }
        }

        /// Options; each parameter sets the property of its name.
        public init(
            clock: @escaping @Sendable () -> Date = { Date() }, http: (any HTTPClient)? = nil,
            logger: Logger = Options.defaultLogger,
            metrics: (any MetricsFactory)? = nil, durability: EventLog.Durability = .synced, readOnly: Bool = false,
            retention: RetentionPolicy? = nil, memoryLimit: Int = 32 << 20, onDamage: DamageRecovery = .fail,
            sharedWithOtherUsers: Bool = false
        ) {
            self.clock = clock
            self.http = http
            self.logger = logger
            self.metrics = metrics
            self.durability = durability
            self.readOnly = readOnly
            self.retention = retention
            self.memoryLimit = memoryLimit
            self.onDamage = onDamage
            self.sharedWithOtherUsers = sharedWithOtherUsers
        }
    }

    /// The clock every loader, store and save of this client uses.
    public let clock: @Sendable () -> Date
    let http: any HTTPClient
    let logger: Logger
    let metrics: CacheMetrics
    let opener: LogOpener
    /// The loads under way, which overlapping loads of the same thing join.
    let inFlight = LoadCoalescer()
    /// Decoded items, reused while their payload is the key's live one; `nil` with no memory.
    let memory: MemoryTier?

    /// Opens the database in `directory`, which the first save creates.
    ///
    /// Another client of this process on the same directory shares its open log (a database is
    /// open once per process: `EventLog.shared(path:options:)`), with the options it was opened
    /// with: its durability, and its clock for the times the log records (each client stamps its
    /// own saves). Make a writing client before a read-only one: a log opened read-only cannot
    /// take a later client's writes, and that client's init throws `.alreadyOpen`. A database
    /// this user or its file system cannot write is opened to read: its caches serve, and each
    /// save throws `.notWritable(path:reason:)`, which says whether the file system is read-only.
    ///
    /// - Parameters:
    ///   - directory: The database directory.
    ///   - options: The clock, HTTP client, logger, metrics, durability, retention and recovery.
    /// - Throws: `CacheLogError`: `.invalidRetention` for `options.retention` that no database
    ///   can keep, `.notADirectory` for a file, `.notADatabase` for a directory
    ///   that holds other files and no database (or a `data.mdb` that is not one), and what
    ///   opening an existing database throws (`.newerFormat`, `.truncated`, `.damaged` for a
    ///   page LMDB could not follow safely, unless `options.onDamage` moves the file aside, …).
    public init(directory: String, options: Options = Options()) throws {
        // Refused here, not at the first save that would record it.
        if let problem = options.retention?.problem { throw CacheLogError.invalidRetention(detail: problem) }
        clock = options.clock
        http = options.http ?? Self.defaultHTTPClient
        logger = options.logger
        metrics = CacheMetrics(factory: options.metrics)
        memory = options.memoryLimit > 0 ? MemoryTier(costLimit: options.memoryLimit) : nil
        opener = try LogOpener(
            path: directory,
            options: EventLog.Options(
                readOnly: options.readOnly, durability: options.durability, clock: options.clock, logger: options.logger,
                initialRetention: options.retention.map { ($0, "CacheClient (\(Self.processName))") }, onDamage: options.onDamage,
                sharedWithOtherUsers: options.sharedWithOtherUsers))
    }

    /// The program's name, for the retention record a client writes.
    private static var processName: String {
        CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? Substring($0)) } ?? "app"
    }

    /// Runs the retention pass this client's saves made due, when there is one.
    ///
    /// A program that saves and then ends at once calls this before it ends; a long-running app
    /// need not, as the log runs such passes in the background. Creates nothing.
    ///
    /// - Throws: `CacheLogError` when the pass cannot read or write the log.
    public func applyRetentionIfDue() async throws {
        guard !opener.readOnlyByChoice, let log = try opener.existing() else { return }
        try await log.applyRetentionIfDue()
    }

    /// A client on a log the app opened itself; the log's clock is the client's.
    ///
    /// - Parameters:
    ///   - log: The open log.
    ///   - options: The HTTP client, logger, metrics and memory tier (the log's own options stand).
    public init(log: EventLog, options: Options = Options()) {
        clock = log.clock
        http = options.http ?? Self.defaultHTTPClient
        logger = options.logger
        metrics = CacheMetrics(factory: options.metrics)
        memory = options.memoryLimit > 0 ? MemoryTier(costLimit: options.memoryLimit) : nil
        opener = LogOpener(log: log)
    }

    /// How far the log has got: its last seq (0 when there is no database yet), read right before
    /// a load's request (``FetchStart``). `nil` when the log cannot be read; the save reads it then.
    func fetchPosition() -> UInt64? {
        do {
            return try opener.existing()?.lastSeq() ?? 0
        } catch {
            return nil
        }
    }

    private static var defaultHTTPClient: any HTTPClient { CurlHTTPClient(userAgent: "cachelog/\(EventLog.version)") }

    /// The log, opened (and created when there is none yet), to read its history, replay it or
    /// write events of the app's own.
    ///
    /// - Throws: `CacheLogError` when the database cannot be opened or created.
    public func log() throws -> EventLog {
        try opener.existing() ?? opener.writable(for: [])
    }

    /// The log when the database exists; `nil` when nothing was saved yet (nothing is created).
    ///
    /// - Throws: `CacheLogError` when the database cannot be opened.
    public func existingLog() throws -> EventLog? {
        try opener.existing()
    }

    /// The feed at `url`, cached under `key`, loaded under `contract` with its app's defaults.
    ///
    /// - Parameters:
    ///   - key: The cache key.
    ///   - url: The feed's URL.
    ///   - contract: How the payload decodes, and the defaults (max age, strategy, retries).
    public func feed<Item>(_ key: String, at url: URL, contract: FeedContract<Item>) -> FeedResource<Item> {
        FeedResource(client: self, key: key, url: url, contract: contract)
    }

    /// The one object at `url`, cached under `object:URL` (``CacheKey/object(_:)``).
    ///
    /// The people search's object cache (a person): cache first unless told otherwise.
    ///
    /// - Parameters:
    ///   - url: The object's URL.
    ///   - contract: How the payload decodes, and the defaults.
    public func object<Item>(at url: URL, contract: FeedContract<Item>) -> FeedResource<Item> {
        FeedResource(client: self, key: CacheKey.object(url), url: url, contract: contract)
    }

    /// The search for `query` through the URL `template`, cached under `key`.
    ///
    /// - Parameters:
    ///   - query: The search text.
    ///   - template: The URL, whose `{query}` is filled in percent-encoded and `{page}` with the
    ///     page number.
    ///   - contract: How a page decodes, and the defaults.
    ///   - key: The cache key; by default `search:CONTRACT:QUERY`.
    public func search<Item>(_ query: String, at template: String, contract: SearchContract<Item>, key: String? = nil) -> SearchResource<Item> {
        SearchResource(
            client: self, key: key ?? CacheKey.search(contract: contract.name, query: query), query: query,
            template: template, contract: contract)
    }

    /// The image data at `url`, cached under `image:URL`: cache first, 7 days by default.
    ///
    /// - Parameter url: The image's URL.
    public func image(at url: URL) -> ImageResource {
        ImageResource(client: self, url: url)
    }

    /// The search history: one entry per query ever searched (keys `search:CONTRACT:QUERY`), the
    /// last saved first, read from the log.
    ///
    /// Creates nothing: none when there is no database yet.
    ///
    /// - Parameters:
    ///   - contract: only the searches of this contract; all when `nil`.
    ///   - limit: at most this many; all when `nil`.
    /// - Throws: `CacheLogError` when the database cannot be opened or read.
    public func searches(contract: String? = nil, limit: Int? = nil) throws -> [PastSearch] {
        guard let log = try opener.existing() else { return [] }
        return try PastSearch.all(in: log, contract: contract, limit: limit, now: clock())
    }
}
