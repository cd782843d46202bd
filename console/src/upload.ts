import { uploadFile } from './api';
import { formatBytes, h, toast } from './dom';
import { fileTableName } from './logic';

/**
 * The upload control under the tree: bytes sent (upload progress), then rows loaded (the answer).
 * `loaded` runs once the server has stored the file, so the tree can show it.
 */
export const createUpload = (loaded: () => Promise<void>): HTMLElement => {
  const fileInput = h('input', {
    type: 'file',
    accept: '.csv,.tsv,.json,.ndjson,.jsonl,.parquet,.txt',
    'data-testid': 'upload-input',
    'aria-label': 'File to upload',
  });
  const nameInput = h('input', {
    type: 'text',
    placeholder: 'table name',
    'data-testid': 'upload-name',
    'aria-label': 'Table name',
  });
  const uploadButton = h('button', { 'data-testid': 'upload-button' }, 'Upload');
  const progress = h('progress', { max: 100, value: 0, 'data-testid': 'upload-progress', hidden: true });
  const uploadStatus = h('div', { class: 'note', 'data-testid': 'upload-status', 'aria-live': 'polite' });
  fileInput.addEventListener('change', () => {
    const f = fileInput.files?.[0];
    if (f && !nameInput.value) nameInput.value = fileTableName(f.name);
  });
  uploadButton.addEventListener('click', () => {
    const file = fileInput.files?.[0];
    if (!file) return toast('Choose a file first', 'error');
    const name = nameInput.value.trim() || fileTableName(file.name);
    uploadButton.disabled = true;
    progress.hidden = false;
    progress.value = 0;
    progress.max = 100;
    uploadStatus.textContent = `Sending 0 of ${formatBytes(file.size)}`;
    void uploadFile(
      name,
      file,
      (sent, total) => {
        progress.value = total ? (sent / total) * 100 : 0;
        uploadStatus.textContent = `Sending ${formatBytes(sent)} of ${formatBytes(total)}`;
      },
      () => {
        progress.removeAttribute('value'); // indeterminate while the server loads the rows
        uploadStatus.textContent = 'Sent; loading rows…';
      },
    )
      .then(async (stored) => {
        progress.value = 100;
        uploadStatus.textContent = `files.${stored.name}: ${stored.row_count} rows loaded`;
        fileInput.value = '';
        nameInput.value = '';
        await loaded();
      })
      .catch((e: Error) => {
        progress.hidden = true;
        uploadStatus.textContent = `Upload failed: ${e.message}`;
        uploadStatus.classList.add('error');
      })
      .finally(() => {
        uploadButton.disabled = false;
      });
  });

  return h(
    'div',
    { class: 'upload' },
    h('div', { class: 'panel-title' }, 'Upload a file'),
    fileInput,
    h('div', { class: 'row' }, nameInput, uploadButton),
    progress,
    uploadStatus,
  );
};
