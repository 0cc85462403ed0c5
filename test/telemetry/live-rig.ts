/**
 * The real parts behind a live endpoint, for tests: an LMDB store and a telemetry ingest (piscina
 * workers, chdb) in a temporary directory, and a uWebSockets.js app on 127.0.0.1 with the endpoint
 * the test registers. Closing stops them in the order the gateway does.
 */
import * as uws from '../../src/http/uws.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { createTelemetryIngest, type TelemetryIngest, type TelemetryIngestOptions } from '../../src/telemetry/ingest/ingest.js';

export interface LiveRig {
  store: Store;
  ingest: TelemetryIngest;
  /** The app's loopback port. */
  port: number;
  /** Closes the ingest, then `stopHub` (the hubs end their sockets), the listener and the store. */
  close(): Promise<void>;
}

/**
 * @param dir data directory (the store and the ingest's spool)
 * @param ingest ingest options besides the store and the data directory
 * @param register puts the endpoint under test on the app
 * @param stopHub closes the hub(s) the endpoint serves
 */
export async function startLiveRig(
  dir: string,
  ingest: Omit<TelemetryIngestOptions, 'store' | 'dataDir'>,
  register: (app: uws.TemplatedApp) => void,
  stopHub: () => void,
): Promise<LiveRig> {
  const store = openStore(dir);
  const started = await createTelemetryIngest({ ...ingest, store, dataDir: dir });
  const app = uws.App();
  register(app);
  const listen = await new Promise<uws.us_listen_socket>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (s) => (s ? resolve(s) : reject(new Error('listen failed')))),
  );
  return {
    store,
    ingest: started,
    port: uws.us_socket_local_port(listen),
    async close() {
      await started.close();
      stopHub();
      uws.us_listen_socket_close(listen);
      await store.close();
    },
  };
}
