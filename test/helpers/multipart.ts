// A multipart/form-data body built by the platform's own FormData, for app.inject uploads.

export interface Part {
  name: string;
  value: string | Buffer;
  filename?: string;
}

export async function multipart(parts: Part[]): Promise<{ payload: Buffer; contentType: string }> {
  const form = new FormData();
  for (const part of parts) {
    if (part.filename !== undefined) form.append(part.name, new Blob([part.value]), part.filename);
    else form.append(part.name, part.value.toString());
  }
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return {
    payload: Buffer.from(await request.arrayBuffer()),
    contentType: request.headers.get('content-type')!,
  };
}
