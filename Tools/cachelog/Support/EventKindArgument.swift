import ArgumentParser
import CacheLog

struct EventKindArgument: ExpressibleByArgument {
    let kind: EventKind

    init?(argument: String) {
        guard let kind = EventKind(name: argument) else { return nil }
        self.kind = kind
    }

    static var allValueStrings: [String] { EventKind.allCases.map(\.name) }
}
