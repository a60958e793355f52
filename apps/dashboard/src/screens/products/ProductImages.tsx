/**
 * A product's images (at most 5, in the order the storefront shows them): each with Move up, Move
 * down and Remove buttons (keyboard-usable, named with the image's position), and an upload with
 * its progress as ProductFiles has. The server makes the WebP renditions the storefront serves.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { trpc, type RouterOutputs } from '../../api';
import { ConfirmAction } from '../../ui/dialogs';
import { ErrorNote } from '../../ui/feedback';
import { UploadField, useUpload } from '../../ui/upload';
import { buttonClass } from '../../ui/button';
import { Card } from '../../ui/layout';

type Product = RouterOutputs['catalog']['get'];
type Image = Product['images'][number];

/** The server's limit (PRODUCT_IMAGES_MAX in @svc/schemas); said here so the form can say it. */
const IMAGES_MAX = 5;

function UploadImage({
  storeId,
  productId,
  onDone,
}: {
  storeId: string;
  productId: string;
  onDone: () => Promise<void>;
}) {
  const id = useId();
  const { input, progress, status, problem, upload, submit } = useUpload({
    url: `/api/dashboard/stores/${encodeURIComponent(storeId)}/products/${encodeURIComponent(productId)}/images`,
    empty: 'Choose an image first.',
    onDone,
  });
  return (
    <form noValidate onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Add an image</h3>
      <UploadField
        id={id}
        label="Image"
        accept="image/png,image/jpeg,image/webp"
        hint="PNG, JPEG or WebP, at most 2 MB."
        input={input}
        problem={problem}
        progress={progress}
      />
      <ErrorNote error={upload.error} />
      <button type="submit" className={buttonClass('primary')} disabled={upload.isPending}>
        Upload
      </button>
      <p role="status">{status}</p>
    </form>
  );
}

export function ProductImages({ product, manage }: { product: Product; manage: boolean }) {
  const queryClient = useQueryClient();
  const { storeId, id: productId, name } = product;
  const [status, setStatus] = useState('');
  const changed = () => queryClient.invalidateQueries(trpc.catalog.get.queryFilter({ storeId, productId }));
  const reorder = useMutation(trpc.catalog.reorderImages.mutationOptions({ onSuccess: changed }));
  const remove = useMutation(trpc.catalog.deleteImage.mutationOptions({ onSuccess: changed }));
  const images = product.images;
  const move = (index: number, by: -1 | 1) => {
    const ids = images.map((i) => i.id);
    const [moved] = ids.splice(index, 1);
    ids.splice(index + by, 0, moved!);
    setStatus('');
    reorder.mutate(
      { storeId, productId, imageIds: ids },
      { onSuccess: () => setStatus(`Image ${index + 1} is now image ${index + 1 + by}.`) },
    );
  };
  const label = (index: number) => `image ${index + 1} of ${images.length}`;
  return (
    <Card id="product-images" title="Images">
      {images.length === 0 ? (
        <p>No images yet: the storefront shows the product without a picture.</p>
      ) : (
        <ol className="image-list">
          {images.map((image: Image, index) => (
            <li key={image.id}>
              <img
                src={image.variants[0]!.url}
                width={image.variants[0]!.width}
                height={image.variants[0]!.height}
                alt={name}
              />
              {manage && (
                <div className="actions">
                  <button
                    type="button"
                    className={buttonClass('secondary')}
                    disabled={index === 0 || reorder.isPending}
                    aria-label={`Move up ${label(index)}`}
                    onClick={() => move(index, -1)}
                  >
                    Move up
                  </button>
                  <button
                    type="button"
                    className={buttonClass('secondary')}
                    disabled={index === images.length - 1 || reorder.isPending}
                    aria-label={`Move down ${label(index)}`}
                    onClick={() => move(index, 1)}
                  >
                    Move down
                  </button>
                  <ConfirmAction
                    verb="Remove"
                    triggerLabel={`Remove ${label(index)}`}
                    title={`Remove ${label(index)}?`}
                    pending={remove.isPending}
                    error={remove.error}
                    onConfirm={() => remove.mutateAsync({ storeId, productId, imageId: image.id })}
                  >
                    <p>The storefront stops showing it.</p>
                  </ConfirmAction>
                </div>
              )}
            </li>
          ))}
        </ol>
      )}
      <ErrorNote error={reorder.error} />
      <p role="status">{status}</p>
      {manage &&
        (images.length < IMAGES_MAX ? (
          <UploadImage storeId={storeId} productId={productId} onDone={changed} />
        ) : (
          <p>This product has {IMAGES_MAX} images, the most it may have: remove one to add another.</p>
        ))}
    </Card>
  );
}
