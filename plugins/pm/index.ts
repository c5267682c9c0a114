// The project management module's code beyond its manifest (manifests/pm.json).
import type { PluginModule } from '../../core/plugin-api.ts';
import { attachmentHooks, getAttachmentContent, taskAttachmentHooks, createAttachment } from './attachments.ts';

export const handlers: PluginModule['handlers'] = { createAttachment, getAttachmentContent };

export const hooks: PluginModule['hooks'] = { Attachment: attachmentHooks, Task: taskAttachmentHooks };
