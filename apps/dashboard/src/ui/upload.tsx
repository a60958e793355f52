/**
 * One file upload with its progress, as the product files, the product images and the store logo
 * use it: `useUpload` holds the file input, the progress, the status line and the "choose a file"
 * problem around one `uploadFile` call (api.ts: XMLHttpRequest, for the progress events);
 * `UploadField` draws the labelled file input with its hint, the problem and the progress bar.
 */
import { useMutation } from '@tanstack/react-query';
import { useRef, useState, type FormEvent, type RefObject } from 'react';
import { uploadFile } from '../api';

export interface UploadProgress {
  loaded: number;
  total: number;
}

export function useUpload(opts: {
  /** The plain route the file is POSTed to (multipart, part `file`). */
  url: string;
  /** What the form says when it is sent without a file. */
  empty: string;
  /** The status line once the file is stored (default `Uploaded <name>.`). */
  uploaded?: (file: File) => string;
  /** After the upload: refetch what shows the stored file. */
  onDone: () => Promise<unknown>;
}) {
  const input = useRef<HTMLInputElement>(null);
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [status, setStatus] = useState('');
  const [problem, setProblem] = useState('');
  const upload = useMutation({
    mutationFn: (file: File) => uploadFile(opts.url, file, (loaded, total) => setProgress({ loaded, total })),
    onMutate: (file) => {
      setStatus(`Uploading ${file.name}…`);
      setProgress({ loaded: 0, total: file.size });
    },
    onSuccess: async (_stored, file) => {
      setStatus(opts.uploaded ? opts.uploaded(file) : `Uploaded ${file.name}.`);
      if (input.current) input.current.value = '';
      await opts.onDone();
    },
    onError: () => setStatus(''),
    onSettled: () => setProgress(null),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setProblem('');
    const file = input.current?.files?.[0];
    if (!file) return setProblem(opts.empty);
    upload.mutate(file);
  };
  return { input, progress, status, setStatus, problem, upload, submit };
}

/** The labelled file input, its hint, the "choose a file" problem and the upload's progress bar. */
export function UploadField({
  id,
  label,
  accept,
  hint,
  input,
  problem,
  progress,
}: {
  id: string;
  label: string;
  accept?: string;
  hint?: string;
  input: RefObject<HTMLInputElement | null>;
  problem: string;
  progress: UploadProgress | null;
}) {
  return (
    <>
      <div className="field">
        <label htmlFor={`${id}-file`}>{label}</label>
        <input
          id={`${id}-file`}
          type="file"
          accept={accept}
          ref={input}
          aria-describedby={hint ? `${id}-hint` : undefined}
        />
        {hint && (
          <span className="hint" id={`${id}-hint`}>
            {hint}
          </span>
        )}
      </div>
      {problem && (
        <p role="alert" className="field-error">
          {problem}
        </p>
      )}
      {progress && (
        <div className="field">
          <label htmlFor={`${id}-progress`}>Upload progress</label>
          <progress id={`${id}-progress`} max={progress.total || 1} value={progress.loaded} />
        </div>
      )}
    </>
  );
}
