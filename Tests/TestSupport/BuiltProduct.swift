import Foundation

/// An executable of this package, built beside the test bundle (`cachelog`, `cachelog-writer`).
public func builtProduct(_ name: String) throws -> URL {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = bundle.deletingLastPathComponent()
    // On Linux the runner is `<build>/debug/<Package>PackageTests.xctest`; on Darwin it may sit inside the bundle.
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory.deleteLastPathComponent()
    }
    throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
}
