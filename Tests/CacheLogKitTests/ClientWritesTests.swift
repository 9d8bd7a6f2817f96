import CacheLogKit
import CacheLogReports
import Foundation
import Logging
import LoopbackHTTP
import MetricsTestKit
import TestSupport
import Testing

/// Removing, clearing and writing a cache without a fetch, through the entry point, on a real
/// database and a real loopback server.
@Suite("CacheClient: remove, removeAll, write", .hangGuard)
struct ClientWritesTests {
    @Test func remove_recordsAnExplicitDelete_andTheNextCacheFirstLoadAsksTheRemote() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let client = try world.client()
        let genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        _ = try await genres.load()
        #expect(world.server.requestCount == 1)

        #expect(try await client.remove("genres"))

        let log = try #require(try client.existingLog())
        let last = try #require(try log.events(EventQuery(reverse: true, limit: 1)).first)
        guard case .event(let event) = last else { Issue.record("not an event: \(last)"); return }
        #expect(event.key == "genres" && event.kind == .delete && event.reason == .explicit)
        #expect(try !log.isLive("genres"))
        let reloaded = try await genres.load()
        #expect(reloaded.source == .remote && world.server.requestCount == 2, "a removed cache serves nothing")
    }

    @Test func remove_ofAKeyWithNothingCached_recordsNothing_andCreatesNoDatabase() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let client = try world.client()
        #expect(try await client.remove("genres") == false)
        #expect(!FileManager.default.fileExists(atPath: world.path), "a removal of nothing created a database")

        _ = try await client.feed("genres", at: world.url("/genres.json"), contract: .genres).load()
        let log = try #require(try client.existingLog())
        let before = try log.lastSeq()
        #expect(try await client.remove("films") == false)
        #expect(try await client.remove("genres") == true)
        #expect(try await client.remove("genres") == false, "the second removal finds nothing")
        #expect(try log.lastSeq() == before + 1)
    }

    /// A removal made while a load's request is under way stands: the answer, fetched from
    /// before the removal, must not bring back what someone removed.
    @Test func aRemovalDuringALoad_isNotUndoneByThatLoadsSave() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films)])
        let client = try world.client()
        let films = client.feed("films", at: world.url("/films.json"), contract: .films)
        _ = try await films.load()
        let answer = Gate()
        defer { answer.open() }
        world.server.setHandler { _ in
            answer.wait()
            return .json(Bodies.films)
        }

        let loading = Task { try await films.load() }
        try #require(await world.server.waitForRequests(count: 2))
        #expect(try await client.remove("films"))
        answer.open()
        let loaded = try await loading.value

        #expect(loaded.items.count == 2, "the caller still gets the remote's items")
        #expect(!loaded.cacheSave.isSaved, "\(loaded.cacheSave)")
        #expect(try client.existingLog()?.isLive("films") == false)
        // It says the removal stays, not that a newer cache was kept: nothing is live.
        let refusal = try #require(loaded.cacheSave.newerCache)
        #expect(refusal.removal && refusal.seq == 3 && refusal.loadBegan == 2, "\(refusal)")
        #expect(refusal.description.hasPrefix("the cache was removed (seq 3, at ") && refusal.description.hasSuffix(
            ") after this load began (at seq 2), and its answer does not bring it back"), "\(refusal)")
        // A load that begins after the removal saves as usual.
        world.serve(["/films.json": .json(Bodies.films)])
        #expect(try await films.load().cacheSave.isSaved)
    }

    @Test func removeAll_removesEveryLiveKey_inOneAppend() async throws {
        let world = try ClientWorld(routes: [
            "/films.json": .json(Bodies.films), "/genres.json": .json(Bodies.genres), "/poster.png": HTTPResponse(status: 200, body: Data([1, 2, 3])),
        ])
        let client = try world.client()
        _ = try await client.feed("films", at: world.url("/films.json"), contract: .films).load()
        _ = try await client.feed("genres", at: world.url("/genres.json"), contract: .genres).load()
        _ = try await client.image(at: world.url("/poster.png")).load()
        let log = try #require(try client.existingLog())
        let before = try log.lastSeq()

        let removed = try await client.removeAll()

        #expect(Set(removed) == ["films", "genres", "image:\(world.url("/poster.png").absoluteString)"])
        #expect(try log.state().entries.isEmpty)
        let deletes = try log.events(EventQuery(from: .seq(before + 1))).compactMap { item -> RecordedEvent? in
            guard case .event(let event) = item else { return nil }
            return event
        }
        #expect(deletes.count == 3 && deletes.allSatisfy { $0.kind == .delete && $0.reason == .explicit })
        #expect(Set(deletes.map(\.recordedAt)).count == 1, "one append, one commit")
        #expect(try await client.removeAll().isEmpty)
    }

    @Test func removals_ofOneKeyAtOnce_recordOneDelete_andOneOfThemSaysItRemoved() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let client = try world.client()
        _ = try await client.feed("genres", at: world.url("/genres.json"), contract: .genres).load()
        let log = try #require(try client.existingLog())
        let before = try log.lastSeq()

        let answers = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 { group.addTask { try await client.remove("genres") } }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }

        #expect(answers.filter { $0 }.count == 1)
        #expect(try log.lastSeq() == before + 1)
    }

    @Test func write_savesItemsAsIfFetchedNow_andACacheFirstLoadServesThemWithoutARequest() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let genres = try world.client().feed("genres", at: world.url("/genres.json"), contract: .genres)

        try await genres.write([Genre(id: 7, name: "Drama")])

        let loaded = try await genres.load()
        #expect(loaded.source == .cache(timestamp: world.clock.date))
        #expect(loaded.items == [Genre(id: 7, name: "Drama")])
        #expect(world.server.requestCount == 0)
    }

    @Test func write_withATimestamp_isJudgedByIt() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let genres = try world.client().feed("genres", at: world.url("/genres.json"), contract: .genres)

        try await genres.write([Genre(id: 7, name: "Drama")], timestamp: world.clock.date.addingTimeInterval(-8 * 86_400))

        // Older than the contract's 7 days: cache first finds it expired and asks the remote.
        let loaded = try await genres.load()
        #expect(loaded.source == .remote && world.server.requestCount == 1)
        #expect(loaded.items.map(\.name) == ["Comedy", "News"])
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity, 1_796_119_200 + 1])
    func write_withATimestampThatIsNotAFiniteDateNoLaterThanNow_isRefused_andWritesNothing(seconds: Double) async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let client = try world.client()
        let genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        _ = try await genres.load()
        let before = try client.existingLog()?.lastSeq()

        let error = await caughtError { try await genres.write([Genre(id: 7, name: "Drama")], timestamp: Date(timeIntervalSince1970: seconds)) }

        #expect(error is InvalidTimestampError, "\(String(describing: error))")
        #expect(error?.localizedDescription.hasPrefix("a cache's timestamp ") == true)
        #expect(try client.existingLog()?.lastSeq() == before)
    }

    /// A load under way began before the write: a load that begins after it starts its own
    /// request, rather than sharing an answer from before the write that its save would refuse.
    @Test func aLoadThatBeginsAfterAWrite_doesNotJoinALoadThatBeganBefore() async throws {
        let world = try ClientWorld()
        let client = try world.client()
        let films = client.feed("films", at: world.url("/films.json"), contract: .films)
        let answer = Gate()
        defer { answer.open() }
        world.server.setHandler { _ in
            answer.wait()
            return .json(Bodies.films)
        }
        let before = Task { try await films.load() }
        try #require(await world.server.waitForRequests(count: 1))

        try await films.write([])
        let after = Task { try await films.load() }

        #expect(await world.server.waitForRequests(count: 2), "the later load joined the earlier one")
        answer.open()
        #expect(try await before.value.cacheSave.newerCache?.timestamp == world.clock.date)
        #expect(try await after.value.cacheSave.isSaved)
    }

    @Test func write_replacesWhatIsCached_andCountsASave() async throws {
        let metrics = TestMetrics()
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let client = try world.client(CacheClient.Options(metrics: metrics))
        let genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        _ = try await genres.load()

        world.days(1)
        try await genres.write([Genre(id: 7, name: "Drama")])

        let log = try #require(try client.existingLog())
        #expect(try log.state().entries.map(\.key) == ["genres"])
        #expect(try await genres.load().items == [Genre(id: 7, name: "Drama")])
        #expect(try metrics.expectCounter("cachelog_saves_total", [("contract", "genres")]).totalValue == 2)
    }

    /// Two tasks writing one key at once, as two parts of an app call `setQueryData`: no write is
    /// refused, each is in the log, and the last to commit is what is cached.
    @Test func writes_ofOneKeyFromTwoTasksAtOnce_allLand_andTheLastToCommitIsLive() async throws {
        let world = try ClientWorld()
        let genres = try world.client().feed("genres", at: world.url("/genres.json"), contract: .genres)

        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<2 {
                group.addTask {
                    for index in 0..<200 { try await genres.write([Genre(id: writer * 1_000 + index, name: "task \(writer)")]) }
                }
            }
            try await group.waitForAll()
        }

        try expectEveryWriteLanded(world, count: 400)
        #expect(world.server.requestCount == 0, "a write sends no request")
    }

    /// Two processes writing one key at once: every write of each returns, and the log's order
    /// decides which is live.
    @Test func writes_ofOneKeyFromTwoProcessesAtOnce_allLand_andTheLastToCommitIsLive() async throws {
        let world = try ClientWorld()
        let genres = try world.client().feed("genres", at: world.url("/genres.json"), contract: .genres)
        try await genres.write([Genre(id: 0, name: "before")])
        let other = try ChildProcess(try builtProduct("cachelog-writer"), [world.path, "200", "--client-writes", "genres"])
        defer { other.stop() }
        // Under way before this process writes, so that the two write at once.
        #expect(try await eventually { (try? String(contentsOf: other.stdoutFile, encoding: .utf8))?.hasPrefix("written 0\n") == true })

        for index in 0..<200 { try await genres.write([Genre(id: index, name: "this process")]) }
        let ended = await other.finish()

        #expect(ended.exited && ended.status == 0, "\(ended.stderrText)")
        #expect(ended.stdoutText.split(separator: "\n").count == 200, "\(ended.stdoutText.suffix(200))")
        try expectEveryWriteLanded(world, count: 401)
    }

    /// `count` puts of `genres` are in the log, and the live cache is the last of them.
    private func expectEveryWriteLanded(_ world: ClientWorld, count: Int) throws {
        let log = try #require(try world.client().existingLog())
        let puts = try log.events(EventQuery(key: "genres", kinds: [.put], includePayload: true)).compactMap { item -> RecordedEvent? in
            if case .event(let event) = item { return event }
            return nil
        }
        #expect(puts.count == count, "\(puts.count) of \(count) writes are in the log")
        let live = try #require(try log.retrieve("genres"))
        #expect(live.payload == puts.last?.payload && live.payloadSeq == puts.last?.seq, "the last write to commit is live")
    }

    @Test func aSecondClientOnTheSameDirectory_sharesTheOpenLog_andItsSavesLand() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films), "/genres.json": .json(Bodies.genres)])
        let first = try world.client()
        _ = try await first.feed("films", at: world.url("/films.json"), contract: .films).load()
        let second = try world.client()

        let genres = try await second.feed("genres", at: world.url("/genres.json"), contract: .genres).load()

        #expect(genres.cacheSave.isSaved, "\(genres.cacheSave)")
        #expect(try first.existingLog() === second.existingLog())
        #expect(try Set(first.existingLog()?.state().entries.map(\.key) ?? []) == ["films", "genres"])
    }

    @Test func aClientOnADirectoryHoldingOtherFiles_throwsNotADatabase_whenItIsMade() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: path + "/notes.txt"))

        #expect {
            _ = try CacheClient(directory: path)
        } throws: { error in
            guard case CacheLogError.notADatabase = error else { return false }
            return true
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["notes.txt"])
    }

    @Test func aSaveThatFails_saysSoOnceAtWarning_andCountsAFailedSave() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films)])
        _ = try await world.client().feed("films", at: world.url("/films.json"), contract: .films).load()
        try await waitUntilClosed(world.path)
        let (logger, messages) = capturingLogger()
        let metrics = TestMetrics()
        let reader = try world.client(CacheClient.Options(logger: logger, metrics: metrics, readOnly: true))

        let loaded = try await reader.feed("films", at: world.url("/films.json"), contract: .films).load()

        #expect(!loaded.cacheSave.isSaved)
        #expect(messages.messages.filter { $0.level >= .warning }.count == 1, "\(messages.messages)")
        #expect(try metrics.expectCounter("cachelog_failed_saves_total", [("contract", "films")]).totalValue == 1)
    }

    @Test func theDefaultLogger_logsNothing() {
        #expect(CacheClient.Options().logger.handler is SwiftLogNoOpLogHandler)
    }

    /// A request that fails while the cache then serves is a detail, not a warning: the app's
    /// logger hears each failed attempt at info, and nothing at warning or worse.
    @Test func failedAttemptsTheCacheCovered_areLoggedAtInfo_toTheAppsLogger() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let (logger, messages) = capturingLogger()
        var genres = try world.client(CacheClient.Options(logger: logger)).feed("genres", at: world.url("/genres.json"), contract: .genres)
        genres.strategy = .remoteFirst
        _ = try await genres.load()
        world.serve(["/genres.json": HTTPResponse(status: 500)])

        let offline = try await genres.load()

        #expect(offline.source != .remote)
        let failed = messages.messages.filter { $0.message == "remote load failed" }
        #expect(failed.count == world.server.requestCount - 1 && failed.allSatisfy { $0.level == .info }, "\(messages.messages)")
        #expect(messages.messages.allSatisfy { $0.level < .warning }, "\(messages.messages)")
    }

    @Test func everyPublicError_readsWhereAppsShowErrors_asTheSameSentence() {
        let errors: [any Error] = [
            CacheLogError.noDatabase(path: "/x"),
            NoUsableDataError(key: "films", remoteError: RemoteLoaderError.connectivity, cacheError: CacheUnavailableError.empty, judgedAt: Date()),
            RemoteLoaderError.invalidData,
            HTTPClientError.bodyTooLarge(limit: 1),
            CacheUnavailableError.empty,
            NewerCacheError(timestamp: Date()),
            NotModifiedError.noCache,
            MaxAge.ParseError.notADuration,
            HistoryReport.SelectionError.unknownKey("films"),
        ]
        for error in errors {
            #expect(error.localizedDescription == "\(error)")
            #expect(!error.localizedDescription.contains("operation could not be completed"))
        }
    }
}

@Suite("CacheClient: clients sharing a log", .hangGuard)
struct SharedLogTests {
    @Test func aWritingClient_madeWhileAReadOnlyOneHasTheDatabase_isRefusedWhenMade() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films)])
        _ = try await world.client().feed("films", at: world.url("/films.json"), contract: .films).load()
        try await waitUntilClosed(world.path)
        let reader = try world.client(CacheClient.Options(readOnly: true))
        #expect(try reader.existingLog()?.isReadOnly == true)

        #expect {
            _ = try world.client()
        } throws: { error in
            guard case CacheLogError.alreadyOpen = error else { return false }
            return true
        }
    }

    @Test func aClientWithARetentionPolicyNoDatabaseCanKeep_isRefusedWhenMade() throws {
        let world = try ClientWorld()
        #expect(throws: CacheLogError.self) {
            _ = try world.client(CacheClient.Options(retention: RetentionPolicy(history: 86_400, sizeLimit: 1024)))
        }
        #expect(!FileManager.default.fileExists(atPath: world.path))
    }

    @Test func aReadOnlyClient_sharingTheLogOfOneThatWrites_writesNothing() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films)])
        let writer = try world.client()
        _ = try await writer.feed("films", at: world.url("/films.json"), contract: .films).load()
        let log = try #require(try writer.existingLog())
        let reader = try world.client(CacheClient.Options(readOnly: true))
        let before = try log.lastSeq()

        world.days(1)
        let loaded = try await reader.feed("films", at: world.url("/films.json"), contract: .films).load()
        await #expect(throws: CacheLogError.readOnly) { try await reader.remove("films") }
        await #expect(throws: CacheLogError.readOnly) { try await reader.validate() }

        #expect(loaded.source == .remote && !loaded.cacheSave.isSaved)
        #expect(try log.lastSeq() == before, "the reader wrote through the shared log")
        #expect(try await reader.validate(dryRun: true).map(\.key) == ["films"])
    }

    /// The audit trail tells a write from a fetch: the log, the replay (text and JSON) and the
    /// audit say a written put was written by the app; a fetched one says nothing of the kind.
    @Test func write_isRecordedAsWrittenByTheApp_inTheLogTheReplayAndTheAudit() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let client = try world.client()
        let genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        _ = try await genres.load()
        world.days(1)
        try await genres.write([Genre(id: 7, name: "Drama")])

        let puts = try client.log().events(EventQuery(key: "genres", kinds: [.put])).compactMap { item -> RecordedEvent? in
            if case .event(let event) = item { return event }
            return nil
        }
        #expect(puts.map { PutOrigin(metadata: $0.metadata) } == [.fetched, .written])
        #expect(puts.map { $0.metadata[CacheLogFeedStore.originName] } == [nil, "written"])

        let replay = try await world.cachelog("replay", "--key", "genres", now: world.now)
        try #require(replay.status == 0, "\(replay.stderr)")
        let putLines = replay.stdout.split(separator: "\n").filter { $0.contains(" put ") }
        #expect(putLines.count == 2 && !putLines[0].contains("written by the app") && putLines[1].hasSuffix(", written by the app"), "\(replay.stdout)")

        let json = try await world.cachelog("replay", "--key", "genres", "--type", "put", "--format", "jsonl", now: world.now)
        try #require(json.status == 0, "\(json.stderr)")
        let origins = try json.stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])["origin"] as? String
        }
        #expect(origins == ["fetched", "written"], "\(json.stdout)")

        let audit = try await world.cachelog("audit", "--key", "genres", "--format", "json", now: world.now)
        try #require(audit.status == 0, "\(audit.stderr)")
        #expect(audit.stdout.contains("written by the app (cached "), "\(audit.stdout)")
        #expect(audit.stdout.components(separatedBy: "by the app").count == 2, "only the write says so: \(audit.stdout)")
    }
}
