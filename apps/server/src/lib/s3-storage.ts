/**
 * Uploaded files in an S3-compatible object store (STORAGE_URL), so every svc host serves the
 * same files (docs/decisions.md, #43). Uploads stream through the same meter as on local disk
 * (size refused while streaming, SHA-256 as it arrives) into a multipart upload that is aborted
 * on any failure; buyers fetch their downloads from the store itself through a presigned URL.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { PassThrough, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from './errors.js';
import type { Logger } from './logger.js';
import {
  checkedKey,
  contentDisposition,
  FileTooLargeError,
  meteredUpload,
  type DownloadLink,
  type FileStorage,
  type ListedObject,
  type StoredObject,
} from './storage.js';

/** Where the bucket is: STORAGE_URL, parsed by config.ts. */
export interface ObjectStoreLocation {
  bucket: string;
  /** The store's URL; absent: AWS S3 itself, by region. */
  endpoint: string | undefined;
  region: string;
  forcePathStyle: boolean;
}

/** S3's smallest part; larger parts would only hold more of a file in memory per upload. */
const PART_BYTES = 5 * 1024 * 1024;

/**
 * A failure of the store (down, refusing the credentials, without the bucket): anything but the
 * stream's own failures and an object that is not there (a bug, as a missing file on disk is).
 */
function isStoreFailure(error: unknown): boolean {
  if (error instanceof FileTooLargeError || error instanceof AppError) return false;
  const e = error as { name?: unknown; $metadata?: unknown; code?: unknown };
  if (e.name === 'NoSuchKey' || e.name === 'NotFound') return false;
  return (
    e.$metadata !== undefined ||
    ['TimeoutError', 'NetworkingError', 'CredentialsProviderError'].includes(String(e.name)) ||
    (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code))
  );
}

export class S3FileStorage implements FileStorage {
  private readonly client: S3Client;

  constructor(
    private readonly location: ObjectStoreLocation,
    private readonly log?: Logger,
  ) {
    this.client = new S3Client({
      endpoint: location.endpoint,
      region: location.region,
      forcePathStyle: location.forcePathStyle,
      // Checksums only where S3 requires them: many S3-compatible stores refuse the SDK's
      // default trailing CRC32 on every upload. The SHA-256 svc keeps is its own (the meter).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A store that does not answer is a 503 in seconds, not a request left hanging.
      requestHandler: { connectionTimeout: 3_000 },
      maxAttempts: 2,
    });
  }

  /** A failure of the store itself answers 503 (and is logged: its cause is not shown); others pass as they are. */
  private explained(error: unknown, action: string, key: string): unknown {
    if (!isStoreFailure(error)) return error;
    this.log?.warn({ err: error, key, bucket: this.location.bucket }, `object store failed to ${action}`);
    return new AppError('service_unavailable', 'The file store is not answering; try again shortly.', {
      cause: error,
    });
  }

  async write(key: string, source: Readable, maxBytes: number): Promise<StoredObject> {
    const { meter, stored } = meteredUpload(maxBytes);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.location.bucket, Key: checkedKey(key), Body: meter },
      partSize: PART_BYTES,
      queueSize: 1,
      // A failed upload aborts its multipart upload: the store keeps none of its parts.
      leavePartsOnError: false,
    });
    const uploading = upload.done();
    // The store failing stops the stream too (the meter would otherwise wait for a reader forever).
    uploading.catch((error: unknown) => meter.destroy(error instanceof Error ? error : new Error(String(error))));
    const [piped, uploaded] = await Promise.allSettled([pipeline(source, meter), uploading]);
    // The stream's own failure first (too large, the client gone): the upload failed of it.
    if (piped.status === 'rejected') throw this.explained(piped.reason, 'store an upload', key);
    if (uploaded.status === 'rejected') throw this.explained(uploaded.reason, 'store an upload', key);
    return stored();
  }

  read(key: string): Readable {
    const out = new PassThrough();
    this.client
      .send(new GetObjectCommand({ Bucket: this.location.bucket, Key: checkedKey(key) }))
      .then(
        (object) => pipeline(object.Body as Readable, out),
        (error: unknown) => {
          const failure = this.explained(error, 'read', key);
          out.destroy(failure instanceof Error ? failure : new Error(String(failure)));
        },
      )
      // A reader that went away (a client that closed the connection) ends the pipeline; nothing to tell.
      .catch(() => undefined);
    return out;
  }

  async remove(key: string): Promise<void> {
    try {
      // S3 answers 204 for a key that holds nothing.
      await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: checkedKey(key) }));
    } catch (error) {
      throw this.explained(error, 'remove', key);
    }
  }

  async downloadUrl(key: string, link: DownloadLink): Promise<string> {
    const Bucket = this.location.bucket;
    const Key = checkedKey(key);
    try {
      // Signing needs no store; asking first answers 503 here for a store that is down, instead
      // of sending the buyer to a link that fails in their browser.
      await this.client.send(new HeadObjectCommand({ Bucket, Key }));
    } catch (error) {
      throw this.explained(error, 'find a download', key);
    }
    return getSignedUrl(
      this.client,
      new GetObjectCommand({
        Bucket,
        Key,
        ResponseContentType: link.mediaType,
        ResponseContentDisposition: contentDisposition(link.fileName),
        ResponseCacheControl: 'private, no-store',
      }),
      { expiresIn: link.expiresInSeconds },
    );
  }

  /**
   * The size and SHA-256 of what the store holds under `key`, read through (a copy's check that
   * the bytes arrived whole, not the store's own checksum); undefined when it holds nothing.
   */
  async held(key: string): Promise<StoredObject | undefined> {
    let body: Readable;
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.location.bucket, Key: checkedKey(key) }),
      );
      body = object.Body as Readable;
    } catch (error) {
      if ((error as { name?: unknown }).name === 'NoSuchKey') return undefined;
      throw this.explained(error, 'read', key);
    }
    const { meter, stored } = meteredUpload(Number.MAX_SAFE_INTEGER);
    const discard = new Writable({ write: (_chunk, _encoding, callback) => callback() });
    try {
      await pipeline(body, meter, discard);
    } catch (error) {
      throw this.explained(error, 'read', key);
    }
    return stored();
  }

  async *list(): AsyncIterable<ListedObject> {
    let token: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.location.bucket, ContinuationToken: token }),
        );
      } catch (error) {
        throw this.explained(error, 'list', '');
      }
      for (const object of page.Contents ?? [])
        if (object.Key && object.LastModified) yield { key: object.Key, modifiedAt: object.LastModified };
      token = page.NextContinuationToken;
    } while (token);
  }

  /** Ends the client's kept-alive connections. */
  close(): void {
    this.client.destroy();
  }
}
