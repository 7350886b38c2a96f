import BridgeState
import Foundation
import LocalTransport
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import TransportCore

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's control socket (mode 0600): one JSON ``ControlRequest`` per line, one
/// JSON ``ControlResponse`` per line back. Route changes are stored and take effect at once.
package final class ControlServer: Service, Sendable {
    package let path: String
    private let runtime: BridgeRuntime
    private let store: any StateStore
    private let group: any EventLoopGroup
    private let logger: Logger

    package init(path: String, runtime: BridgeRuntime, store: any StateStore, group: any EventLoopGroup, logger: Logger) {
        self.path = path
        self.runtime = runtime
        self.store = store
        self.group = group
        self.logger = logger
    }

    package func run() async throws {
        let server = UnixLineServer(path: self.path, mode: 0o600, splitter: LineSplitter(maxLineBytes: 64 * 1024))
        do {
            try await server.run(group: self.group) { client in await self.serve(client) }
        } catch let error as UnixLineServer.SetupError {
            self.logger.error("control socket not available; route changes only work offline", metadata: ["error": "\(error)"])
        }
    }

    private func serve(_ client: NIOAsyncChannel<LineSplitter.Line, ByteBuffer>) async {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try? await client.executeThenClose { inbound, outbound in
            for try await line in inbound {
                let response: ControlResponse
                if case .text(let text) = line, let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(text.utf8)),
                    ![.list, .add, .remove].contains(request.op)
                {
                    response = await self.runtime.describe(request)
                } else if case .text(let text) = line, let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(text.utf8)) {
                    let editor = RouteEditor(configuration: await self.runtime.currentConfiguration, store: self.store)
                    response = editor.apply(request)
                    if request.op != .list, response.ok {
                        self.logger.notice("route changed", metadata: ["op": "\(request.op.rawValue)", "channel": "\(request.channel ?? "")"])
                        await self.runtime.refreshRouter()
                        await self.runtime.relay.announce(.routesChanged)
                    }
                } else {
                    response = RouteEditor.failure("bad request")
                }
                var buffer = ByteBuffer(bytes: (try? encoder.encode(response)) ?? Data("{}".utf8))
                buffer.writeString("\n")
                try await outbound.write(buffer)
            }
        }
    }
}
