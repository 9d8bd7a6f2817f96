import Foundation
import Testing

/// What a machine can check of the rules in Tests/README.md.
@Suite("the tests' own rules")
struct TestRulesTests {
    /// Tests/, found from this file's own path.
    private static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    /// No test source names a system device: a device a test needs is a node of its own
    /// (`DeviceNode`). `/dev/fd/N` resolves into procfs, where nothing can be created or renamed,
    /// so it may be named. Comments may name devices (to say why not).
    @Test func noTestNamesASystemDevice() throws {
        // Spelt in two, so that this line does not name what it looks for.
        let devices = "/dev" + "/"
        var offenders: [String] = []
        let files = FileManager.default.enumerator(at: Self.tests, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            let language = file.pathExtension
            guard ["swift", "sh"].contains(language) else { continue }
            let comment = language == "swift" ? "//" : "#"
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix(comment) else { continue }
                var rest = Substring(code)
                while let found = rest.range(of: devices) {
                    rest = rest[found.upperBound...]
                    if !rest.hasPrefix("fd/") && !rest.hasPrefix("fd\"") {
                        offenders.append("\(file.path.dropFirst(Self.tests.path.count + 1)):\(number + 1): \(code)")
                        break
                    }
                }
            }
        }
        #expect(offenders.isEmpty, "a test names a system device; make its own with DeviceNode (Tests/README.md):\n\(offenders.joined(separator: "\n"))")
    }

    /// No test reports a skip as a pass: one that cannot set itself up is skipped with its reason
    /// (`.enabled(if:)`, `Test.cancel`), never a print of "skipped" and a return.
    @Test func noTestPrintsSkippedAndPasses() throws {
        // Spelt in two, so that this line does not name what it looks for.
        let printed = "print(\"" + "skipped"
        var offenders: [String] = []
        let files = FileManager.default.enumerator(at: Self.tests, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() where line.contains(printed) {
                offenders.append("\(file.path.dropFirst(Self.tests.path.count + 1)):\(number + 1)")
            }
        }
        #expect(offenders.isEmpty, "a test prints that it skipped and passes (Tests/README.md): \(offenders)")
    }
}
