import Foundation
import Logging
import Testing
import TransportCore

@testable import LocalTransport

/// Who may write into the bridge's FIFO (issue 13, defect 4): only a FIFO of our own,
/// no wider than configured, is read.
@Suite("FIFO ownership and mode")
struct FIFOTransportTests {
    let folder: String

    init() throws {
        self.folder = NSTemporaryDirectory() + "fifo-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: self.folder, withIntermediateDirectories: true)
    }

    func transport(_ path: String, mode: UInt32 = 0o600) -> FIFOTransport {
        FIFOTransport(
            name: "alerts", path: path, mode: mode, options: LocalInputOptions(nick: "cron"),
            handler: LineInputPumpTests.RecordingHandler(), logger: Logger(label: "fifo-test")
        )
    }

    static func mode(_ path: String) -> mode_t {
        var status = stat()
        _ = lstat(path, &status)
        return status.st_mode & 0o7777
    }

    @Test func aNewFIFOGetsTheConfiguredMode() throws {
        let path = self.folder + "/new"
        let descriptor = try self.transport(path, mode: 0o620).open()
        close(descriptor)
        #expect(Self.mode(path) == 0o620)
    }

    @Test func anExistingFIFOWiderThanConfiguredIsRefused() throws {
        let path = self.folder + "/wide"
        #expect(mkfifo(path, 0o600) == 0)
        #expect(chmod(path, 0o666) == 0)
        #expect {
            _ = try self.transport(path).open()
        } throws: { error in
            "\(error)".contains(path) && "\(error)".contains("mode 666")
        }
        // Left as it was: the operator decides.
        #expect(Self.mode(path) == 0o666)
    }

    @Test func anExistingFIFOOfOurOwnWithinTheModeIsUsed() throws {
        let path = self.folder + "/narrow"
        #expect(mkfifo(path, 0o600) == 0)
        #expect(chmod(path, 0o400) == 0)
        let descriptor = try self.transport(path, mode: 0o600).open()
        close(descriptor)
        #expect(Self.mode(path) == 0o600)
    }

    @Test(.enabled(if: geteuid() == 0, "giving a file to another user needs root"))
    func aFIFOOfAnotherUserIsRefused() throws {
        let path = self.folder + "/theirs"
        #expect(mkfifo(path, 0o600) == 0)
        #expect(chown(path, 65534, 65534) == 0)
        #expect {
            _ = try self.transport(path).open()
        } throws: { error in
            "\(error)".contains(path) && "\(error)".contains("belongs to uid 65534")
        }
    }

    @Test func somethingElseAtThePathIsRefused() throws {
        let path = self.folder + "/file"
        try "x".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: FIFOTransport.SetupError.self) { _ = try self.transport(path).open() }
    }
}
