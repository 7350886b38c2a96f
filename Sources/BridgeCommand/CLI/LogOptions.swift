import Bridge
import ArgumentParser
import Logging

/// `--log-level`, shared by every command.
struct LogOptions: ParsableArguments {
    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "warning"

    func makeLogger(_ label: String) throws(ValidationError) -> Logger {
        guard let level = Logger.Level(rawValue: self.logLevel) else {
            throw ValidationError("unknown --log-level \(self.logLevel)")
        }
        var logger = Logger(label: label, factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = level
        return logger
    }
}
